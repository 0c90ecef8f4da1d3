#pragma once
// An exact optimum written from docs/model.md alone, to check `ppsim optimal`'s certificate and
// synthesis's (docs/bounds.md, "How the exact optimum is tested"): a depth-first branch and bound
// that appends one op at a time to a device's order, each choice of keeping or recomputing made
// where it matters (R when a forward stores only its checkpoint, RW or RBW when B drops what W
// needs). It shares no code with bounds/exact.cpp; the engine only replays its answer.
//
// Every tuple of per-device orders has one as-soon-as-possible timing (docs/model.md, "Time"),
// and its ops sorted by start time are an order in which each op's dependencies come first. The
// search appends only ops that start no earlier than the op appended before, so it meets every
// tuple (ties in any order) while skipping most of the interleavings of the same tuple; it stops
// a branch as soon as a device's order goes over the cap (memory never delays an op, so a prefix
// over the cap stays over it) or cannot end before the best makespan found.
#include "base/index.h"
#include "bounds/lower_bounds.h"
#include "sim/memory.h"
#include "sim/metrics.h"
#include "sim/scenario.h"
#include "sim/schedule.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace ppsim::testing {

struct BruteForceResult {
  Ticks makespan;
  Schedule schedule;      ///< the per-device orders reaching `makespan`
  std::int64_t nodes = 0; ///< ops appended over the whole search
};

/// The minimum makespan over every schedule of `scenario` (one pipe, count or zb memory, constant
/// transfers, no contention or blocking) whose backward has form `form`, with recomputation
/// (R; RW or RBW with a split backward) allowed under a cap; nothing below `upper_bound` (a
/// feasible makespan known beforehand) means the optimum is `upper_bound`, and the result then
/// carries no schedule. Gives up (nullopt) past `max_nodes`.
class BruteForce {
public:
  /// `backward_remat` false leaves RW and RBW out (to show where they matter).
  BruteForce(const Scenario &scenario, BackwardForm form, bool backward_remat = true)
      : scenario_(scenario), split_(form == BackwardForm::split), stages_(scenario.stage_count()),
        m_(scenario.microbatches), capped_(scenario.activations.cap.has_value()),
        backward_remat_(backward_remat), cap_(capped_ ? *scenario.activations.cap : 0) {}

  std::optional<BruteForceResult> solve(Ticks upper_bound, std::int64_t max_nodes) {
    best_ = upper_bound.count();
    max_nodes_ = max_nodes;
    nodes_ = 0;
    best_orders_.clear();
    state_.assign(at(stages_ * m_), Pair{});
    device_free_.assign(at(scenario_.devices), 0);
    resident_.assign(at(scenario_.devices), 0.0);
    remaining_.assign(at(scenario_.devices), 0);
    orders_.assign(at(scenario_.devices), {});
    positive_durations_ = true;
    for (int s = 0; s < stages_; ++s) {
      const StageCosts &costs = scenario_.stage_costs[at(s)];
      remaining_[at(device(s))] += m_ * (costs.forward + costs.backward_input +
                                         costs.backward_weight).count();
      for (const Ticks duration :
           {costs.forward, costs.backward_input, costs.recompute_forward,
            costs.recompute_weight_inputs, costs.recompute_full_backward})
        positive_durations_ = positive_durations_ && duration > Ticks{0};
      positive_durations_ = positive_durations_ && (!split_ || costs.backward_weight > Ticks{0});
    }
    search(0, -1);
    if (nodes_ > max_nodes_)
      return std::nullopt;
    BruteForceResult result{Ticks{best_}, {}, nodes_};
    if (!best_orders_.empty()) {
      result.schedule.name = "brute force";
      result.schedule.device_ops = best_orders_;
    }
    return result;
  }

private:
  enum class Rebuild : std::uint8_t { none, weight_inputs, full_backward };
  /// What the search has placed of one (stage, microbatch), with the end times of its ops.
  struct Pair {
    bool forward = false, recompute = false, backward = false, rebuild = false, weight = false;
    bool recomputed = false; ///< the forward stored only its checkpoint: an R must follow
    Rebuild rebuilt = Rebuild::none;
    std::int64_t forward_end = 0, recompute_end = 0, backward_end = 0, rebuild_end = 0;
  };

  int device(int s) const { return scenario_.stage_device[at(s)]; }
  Pair &pair(int s, int j) { return state_[at(s * m_ + j)]; }
  std::int64_t crossing(int s) const { // transfer from stage s to s + 1 (either direction)
    if (device(s) == device(s + 1) || at(s) >= scenario_.boundary_transfer.size())
      return 0;
    return scenario_.boundary_transfer[at(s)].count();
  }
  const StageCosts &costs(int s) const { return scenario_.stage_costs[at(s)]; }
  const StageMemory &memory(int s) const { return scenario_.activations.stages[at(s)]; }

  /// One candidate op: its kind, when it starts and lasts, the memory it takes and frees, and
  /// the choice it makes.
  struct Candidate {
    OpKind kind;
    int stage, microbatch;
    std::int64_t start, duration;
    double alloc, release, transient;
    bool recomputed = false;
    Rebuild rebuilt = Rebuild::none;
  };

  /// The earliest microbatch j can finish: its chain of ops not yet placed, run back to back
  /// from `last_start` or from what it waits for (transfers included; R, RW and RBW left out).
  std::int64_t chain_end(int j, std::int64_t last_start) {
    int s = 0;
    while (s < stages_ && pair(s, j).forward)
      ++s;
    std::int64_t t = 0;
    int top = stages_ - 1; // the highest stage whose backward is still to run
    if (s < stages_) {
      t = std::max(last_start, s == 0 ? 0 : pair(s - 1, j).forward_end + crossing(s - 1));
      for (int k = s; k < stages_; ++k)
        t += costs(k).forward.count() + (k + 1 < stages_ ? crossing(k) : 0);
    } else {
      while (top >= 0 && pair(top, j).backward)
        --top;
      if (top < 0) { // only W (and what rebuilds for it) left
        std::int64_t end = 0;
        if (!split_)
          return end;
        for (int k = 0; k < stages_; ++k)
          if (!pair(k, j).weight)
            end = std::max(end, std::max(last_start, pair(k, j).backward_end) +
                                    costs(k).backward_weight.count());
        return end;
      }
      const std::int64_t gradient = top + 1 == stages_
                                        ? pair(top, j).forward_end
                                        : pair(top + 1, j).backward_end + crossing(top);
      t = std::max(last_start, gradient);
    }
    for (int k = top; k >= 0; --k)
      t += backward_duration(k) + (k > 0 ? crossing(k - 1) : 0);
    return t + (split_ ? costs(0).backward_weight.count() : 0);
  }

  std::int64_t backward_duration(int s) const {
    return (split_ ? costs(s).backward_input : costs(s).backward_input + costs(s).backward_weight)
        .count();
  }

  void search(std::int64_t last_start, int last_device) {
    if (++nodes_ > max_nodes_)
      return;
    for (int g = 0; g < scenario_.devices; ++g)
      if (std::max(device_free_[at(g)], last_start) + remaining_[at(g)] >= best_)
        return;
    for (int j = 0; j < m_; ++j)
      if (chain_end(j, last_start) >= best_)
        return;
    bool all_done = true;
    std::vector<Candidate> candidates;
    for (int s = 0; s < stages_; ++s)
      for (int j = 0; j < m_; ++j)
        add_candidates(s, j, candidates, all_done);
    if (all_done) {
      const std::int64_t makespan =
          *std::max_element(device_free_.begin(), device_free_.end());
      if (makespan < best_) {
        best_ = makespan;
        best_orders_ = orders_;
      }
      return;
    }
    for (const Candidate &candidate : candidates) {
      const int g = device(candidate.stage);
      // With every op longer than 0 an op never starts when one it waits for does, so ops that
      // start together are independent: appended by device they are met once.
      if (candidate.start < last_start ||
          (positive_durations_ && candidate.start == last_start && g <= last_device))
        continue;
      const double during = resident_[at(g)] + candidate.alloc + candidate.transient;
      if (capped_ && over_cap(during, cap_))
        continue;
      apply(candidate, g, +1);
      search(candidate.start, g);
      apply(candidate, g, -1);
      if (nodes_ > max_nodes_)
        return;
    }
  }

  void add_candidates(int s, int j, std::vector<Candidate> &out, bool &all_done) {
    const Pair &state = pair(s, j);
    const StageCosts &cost = costs(s);
    const StageMemory &mem = memory(s);
    const int g = device(s);
    const auto start_after = [&](std::int64_t ready) {
      return std::max(ready, device_free_[at(g)]);
    };
    if (state.weight || (!split_ && state.backward))
      return;
    all_done = false;
    if (!state.forward) {
      // Entry forwards in microbatch order: microbatches are identical, so this is a relabeling.
      if (s == 0 ? (j > 0 && !pair(0, j - 1).forward) : !pair(s - 1, j).forward)
        return;
      const std::int64_t ready = s == 0 ? 0 : pair(s - 1, j).forward_end + crossing(s - 1);
      const std::int64_t start = start_after(ready);
      out.push_back({OpKind::forward, s, j, start, cost.forward.count(), mem.stored, 0, 0});
      if (capped_) // stores only its checkpoint (none in the count and zb models)
        out.push_back(
            {OpKind::forward, s, j, start, cost.forward.count(), 0, 0, 0, true, Rebuild::none});
      return;
    }
    const bool exit = s + 1 == stages_;
    const bool gradient_here = exit || pair(s + 1, j).backward;
    const std::int64_t gradient_ready =
        exit ? state.forward_end : pair(s + 1, j).backward_end + crossing(s);
    if (state.recomputed && !state.recompute) {
      if (scenario_.remat_timing == RematTiming::lumped && !gradient_here)
        return;
      std::int64_t ready = state.forward_end;
      if (scenario_.remat_timing == RematTiming::lumped)
        ready = std::max(ready, gradient_ready);
      out.push_back({OpKind::recompute_forward, s, j, start_after(ready),
                     cost.recompute_forward.count(), mem.stored, 0, 0});
      return;
    }
    if (!state.backward) {
      if (!gradient_here)
        return;
      const std::int64_t start = start_after(gradient_ready);
      if (!split_) {
        out.push_back({OpKind::backward_full, s, j, start,
                       (cost.backward_input + cost.backward_weight).count(), 0,
                       mem.stored - mem.kept_after_w, 0});
        return;
      }
      const double freed = mem.stored - mem.kept_after_b;
      out.push_back(
          {OpKind::backward_input, s, j, start, cost.backward_input.count(), 0, freed, 0});
      if (capped_ && backward_remat_) {
        out.push_back({OpKind::backward_input, s, j, start, cost.backward_input.count(), 0,
                       freed + mem.weight_input_share, 0, false, Rebuild::weight_inputs});
        out.push_back({OpKind::backward_input, s, j, start, cost.backward_input.count(), 0,
                       freed + mem.kept_after_b, 0, false, Rebuild::full_backward});
      }
      return;
    }
    if (state.rebuilt != Rebuild::none && !state.rebuild) {
      const std::int64_t start = start_after(state.backward_end);
      if (state.rebuilt == Rebuild::weight_inputs)
        out.push_back({OpKind::recompute_weight_inputs, s, j, start,
                       cost.recompute_weight_inputs.count(), mem.weight_input_share, 0, 0});
      else // RBW reruns the forward and B: the forward's record is held while it runs
        out.push_back({OpKind::recompute_full_backward, s, j, start,
                       cost.recompute_full_backward.count(), mem.kept_after_b, 0, mem.stored});
      return;
    }
    const std::int64_t ready = state.rebuilt == Rebuild::none
                                   ? state.backward_end
                                   : std::max(state.backward_end, state.rebuild_end);
    out.push_back({OpKind::backward_weight, s, j, start_after(ready),
                   cost.backward_weight.count(), 0, mem.kept_after_b - mem.kept_after_w, 0});
  }

  /// Places (`sign` = +1) or removes (-1) `candidate` on device `g`.
  void apply(const Candidate &candidate, int g, int sign) {
    Pair &state = pair(candidate.stage, candidate.microbatch);
    const std::int64_t end = candidate.start + candidate.duration;
    const bool place = sign > 0;
    if (place) {
      previous_free_.push_back(device_free_[at(g)]);
      device_free_[at(g)] = end;
      orders_[at(g)].push_back(Op::make(candidate.kind, candidate.stage, candidate.microbatch));
    } else {
      device_free_[at(g)] = previous_free_.back();
      previous_free_.pop_back();
      orders_[at(g)].pop_back();
    }
    resident_[at(g)] += sign * (candidate.alloc - candidate.release);
    // Mandatory work leaves the device's remaining total; an optional op joins it when chosen.
    const StageCosts &cost = costs(candidate.stage);
    switch (candidate.kind) {
    case OpKind::forward:
      state.forward = place;
      state.forward_end = end;
      state.recomputed = place && candidate.recomputed;
      remaining_[at(g)] -= sign * candidate.duration;
      if (candidate.recomputed)
        remaining_[at(g)] += sign * cost.recompute_forward.count();
      break;
    case OpKind::recompute_forward:
      state.recompute = place;
      state.recompute_end = end;
      remaining_[at(g)] -= sign * candidate.duration;
      break;
    case OpKind::backward_full:
    case OpKind::backward_input:
      state.backward = place;
      state.backward_end = end;
      state.rebuilt = place ? candidate.rebuilt : Rebuild::none;
      remaining_[at(g)] -= sign * candidate.duration;
      if (candidate.rebuilt == Rebuild::weight_inputs)
        remaining_[at(g)] += sign * cost.recompute_weight_inputs.count();
      if (candidate.rebuilt == Rebuild::full_backward)
        remaining_[at(g)] += sign * cost.recompute_full_backward.count();
      break;
    case OpKind::recompute_weight_inputs:
    case OpKind::recompute_full_backward:
      state.rebuild = place;
      state.rebuild_end = end;
      remaining_[at(g)] -= sign * candidate.duration;
      break;
    case OpKind::backward_weight:
      state.weight = place;
      remaining_[at(g)] -= sign * candidate.duration;
      break;
    default:
      break;
    }
  }

  const Scenario &scenario_;
  bool split_;
  int stages_, m_;
  bool capped_, backward_remat_, positive_durations_ = true;
  double cap_;
  std::int64_t best_ = 0, max_nodes_ = 0, nodes_ = 0;
  std::vector<Pair> state_;
  std::vector<std::int64_t> device_free_, remaining_, previous_free_;
  std::vector<double> resident_;
  std::vector<std::vector<Op>> orders_, best_orders_;
};

} // namespace ppsim::testing
