// ZB automatic heuristic (docs/schedules.md, "zb-auto"): zb-auto with cap --K X, zb-1p (X = p) and
// zb-2p (X = 2p) are this one generator with different caps.
// Source: sail-sg/zero-bubble-pipeline-parallelism, megatron/core/pipeline_parallel/zerobubble/
// scheduler/zb.py (Graph.manual_order, initial_solution); arXiv 2401.10241 section 3.
#include "base/assert.h"
#include "base/error.h"
#include "base/index.h"
#include "sim/memory.h"
#include "sim/schedules/families.h"
#include "sim/schedules/greedy.h"
#include "sim/schedules/op_lists.h"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <optional>

namespace ppsim::schedules {
namespace {

enum Kind : int { kF = 0, kB = 1, kW = 2 };
constexpr std::array<OpKind, 3> kOpKinds{OpKind::forward, OpKind::backward_input,
                                         OpKind::backward_weight};

/// The reference's ValueError("Cannot fit memory") as a user error naming the stage (O-19).
CapUnreachable cannot_fit_memory(int stage, double cap_share) {
  return CapUnreachable(
      fmt::format("schedule 'zb-auto' cannot fit memory on stage {}: a cap of {} stored "
                  "activations leaves no room for the next op",
                  stage, cap_share));
}

struct Flags {
  bool allow_bubble_before_first_b;
  bool prioritize_b;
  bool no_bubble_greedy;
};

/// One run of `manual_order` for one flag combination; state names follow sail-sg zb.py.
class ZbAutoRun {
public:
  ZbAutoRun(const Scenario &scenario, const std::vector<double> &max_mem, Flags flags)
      : S_(scenario.stage_count()), m_(scenario.microbatches), flags_(flags), max_mem_(max_mem),
        e_(S_, 0), mem_now_(at(S_), 0.0), bub_(S_, 0), order_(at(S_)), order_end_(at(S_)) {
    for (int s = 0; s < S_; ++s) {
      const auto i = at(s);
      const PassMemory memory = pass_memory(scenario, s);
      // The engine's durations, the runtime's overhead per action included.
      cost_[kF].push_back(op_duration(scenario, Op::make(OpKind::forward, s, 0)).count());
      cost_[kB].push_back(op_duration(scenario, Op::make(OpKind::backward_input, s, 0)).count());
      cost_[kW].push_back(op_duration(scenario, Op::make(OpKind::backward_weight, s, 0)).count());
      mem_[kF].push_back(memory.forward);
      mem_[kB].push_back(memory.backward);
      mem_[kW].push_back(memory.weight);
      comm_.push_back(s + 1 < S_ ? scenario.boundary_transfer[i].count() : 0);
    }
    for (int k = 0; k < 3; ++k) {
      count_[k].assign(at(S_), 0);
      end_[k].assign(at(S_) * at(m_), 0);
    }
  }

  void run() {
    warm_up();
    for (int i = 1; i < m_; ++i)
      steady(i);
    for (int s = 0; s < S_; ++s) {
      // The last stage puts a forward every round and nf[s] >= nf[s+1], so all ran.
      PPSIM_ASSERT(nf(s) == m_);
      while (nw(s) < m_)
        put(s, kW);
    }
  }

  /// max_s end(W(s, m-1)) - end(F(s, 0)) + f[s]: the max span (docs/schedules.md, "zb-auto").
  [[nodiscard]] std::int64_t score() const {
    std::int64_t best = 0;
    for (int s = 0; s < S_; ++s) {
      best = std::max(best, end(kW, s, m_ - 1) - end(kF, s, 0) + cost(kF, s));
    }
    return best;
  }

  [[nodiscard]] TimedSchedule result(const Scenario &scenario) const {
    TimedSchedule timed;
    timed.schedule = empty_schedule(scenario);
    timed.end.resize(at(scenario.devices));
    for (int s = 0; s < S_; ++s) {
      const auto device = at(scenario.stage_device[at(s)]);
      for (std::size_t k = 0; k < order_[at(s)].size(); ++k) {
        const auto [kind, mb] = order_[at(s)][k];
        timed.schedule.device_ops[device].push_back(Op::make(kOpKinds[at(kind)], s, mb));
        timed.end[device].push_back(Ticks{order_end_[at(s)][k]});
      }
    }
    return timed;
  }

private:
  [[nodiscard]] int nf(int s) const { return count_[kF][at(s)]; }
  [[nodiscard]] int nb(int s) const { return count_[kB][at(s)]; }
  [[nodiscard]] int nw(int s) const { return count_[kW][at(s)]; }
  [[nodiscard]] std::int64_t cost(int kind, int s) const { return cost_[kind][at(s)]; }
  [[nodiscard]] double mem(int kind, int s) const { return mem_[kind][at(s)]; }
  [[nodiscard]] std::int64_t end(int kind, int s, int mb) const {
    return end_[kind][at(s) * at(m_) + at(mb)];
  }
  std::int64_t &e(int s) { return e_[at(s)]; }
  std::int64_t &bub(int s) { return bub_[at(s)]; }
  double &memory(int s) { return mem_now_[at(s)]; }
  [[nodiscard]] double max_mem(int s) const { return max_mem_[at(s)]; }
  /// Arrival of the cross-stage input of the next F (from s-1) or of B(s, i) (from s+1).
  [[nodiscard]] std::int64_t f_arrival(int s) const {
    return end(kF, s - 1, nf(s)) + comm_[at(s - 1)];
  }
  [[nodiscard]] std::int64_t b_arrival(int s, int i) const {
    return end(kB, s + 1, i) + comm_[at(s)];
  }

  void put(int s, int kind) {
    const int mb = count_[kind][at(s)];
    const std::int64_t no_bubble = e(s) + cost(kind, s);
    std::int64_t t = no_bubble;
    if (kind == kF && s > 0)
      t = std::max(t, end(kF, s - 1, mb) + comm_[at(s - 1)] + cost(kind, s));
    if (kind == kB && s + 1 < S_)
      t = std::max(t, end(kB, s + 1, mb) + comm_[at(s)] + cost(kind, s));
    if (nf(s) > 0) {
      bub(s) += t - no_bubble;
      max_bubble_ = std::max(max_bubble_, bub(s));
    }
    e(s) = t;
    end_[kind][at(s) * at(m_) + at(mb)] = t;
    memory(s) += mem(kind, s);
    ++count_[kind][at(s)];
    order_[at(s)].push_back({kind, mb});
    order_end_[at(s)].push_back(t);
  }

  /// W-filling before an op whose input arrives at `arrival` (zb.py fill_w).
  void fill_w(int s, std::int64_t arrival) {
    while (nw(s) < nb(s) && e(s) + cost(kW, s) <= arrival)
      put(s, kW);
    if (nw(s) < nb(s) && e(s) < arrival) {
      if (arrival - e(s) <= max_bubble_ - bub(s)) {
        if (flags_.no_bubble_greedy)
          put(s, kW);
      } else {
        put(s, kW);
      }
    }
  }

  void make_room(int s, double delta) {
    while (over_cap(memory(s) + delta, max_mem(s))) {
      if (nw(s) >= nb(s)) {
        throw cannot_fit_memory(s, max_mem(s) / mem(kF, s));
      }
      put(s, kW);
    }
  }

  void warm_up() {
    for (int s = 0; s < S_; ++s)
      put(s, kF);
    std::vector<int> extra(at(S_), 0);
    std::int64_t last = end(kF, S_ - 1, 0) + cost(kB, S_ - 1);
    for (int s = S_ - 2; s >= 0; --s) {
      double mm = memory(s);
      std::int64_t tt = e(s);
      const std::int64_t c = comm_[at(s)];
      int &more = extra[at(s)];
      while (nf(s) + more < m_ && !over_cap(mm + mem(kF, s), max_mem(s))) {
        if (flags_.allow_bubble_before_first_b ? tt + cost(kF, s) > last + c : tt >= last + c)
          break;
        mm += mem(kF, s);
        tt += cost(kF, s);
        ++more;
      }
      last = std::max(tt, last + c) + cost(kB, s);
    }
    // Strictly decreasing along the pipeline. The clamp to extra[s-1] is ppsim's: the
    // reference skips the decrease once stage s would run all m forwards, which with unequal
    // costs can leave stage s ahead of stage s-1 (forwards before their inputs exist).
    for (int s = 1; s < S_; ++s) {
      int &more = extra[at(s)];
      const int previous = extra[at(s - 1)];
      while (more > 0 && more >= previous && nf(s) + more < m_)
        --more;
      more = std::min(more, previous);
    }
    for (int s = 0; s < S_; ++s) {
      for (int k = 0; k < extra[at(s)]; ++k)
        put(s, kF);
    }
    for (int s = S_ - 1; s >= 0; --s)
      put(s, kB);
  }

  /// Whether stage s wants its next F now (docs/schedules.md, "zb-auto").
  [[nodiscard]] bool wants_forward(int s) {
    if (nf(s) >= m_)
      return false;
    if (!(flags_.prioritize_b && s + 1 < S_ && nf(s) >= nf(s + 1) + 2))
      return true;
    const std::int64_t next = e(s + 1) + cost(kF, s + 1) + cost(kB, s + 1) + comm_[at(s)];
    if (e(s) >= next)
      return false;
    // Cost of the W's make_room(s, mem_f) would put, simulated without putting.
    std::int64_t w_cost = 0;
    double with_w = memory(s) + mem(kF, s);
    for (int k = nw(s); over_cap(with_w, max_mem(s)) && k < nb(s); ++k) {
      w_cost += cost(kW, s);
      with_w += mem(kW, s);
    }
    if (e(s) + cost(kF, s) + w_cost <= next)
      return true;
    return !(next - e(s) <= max_bubble_ - bub(s));
  }

  void steady(int i) {
    std::vector<int> want(at(S_));
    for (int s = 0; s < S_; ++s)
      want[at(s)] = wants_forward(s) ? 1 : 0;
    for (int s = S_ - 2; s >= 0; --s) {
      want[at(s)] = std::min(want[at(s)], want[at(s + 1)]);
    }
    for (int s = 0; s < S_; ++s) {
      if (want[at(s)] == 0)
        continue;
      make_room(s, mem(kF, s));
      if (s > 0)
        fill_w(s, f_arrival(s));
      put(s, kF);
    }
    for (int s = S_ - 1; s >= 0; --s) {
      make_room(s, mem(kB, s));
      if (s + 1 < S_)
        fill_w(s, b_arrival(s, i));
      if (s == 0 && nf(0) == m_) {
        while (nw(0) < nb(0))
          put(0, kW);
      }
      put(s, kB);
    }
  }

  int S_;
  int m_;
  Flags flags_;
  const std::vector<double> &max_mem_;
  std::array<std::vector<std::int64_t>, 3> cost_;
  std::array<std::vector<double>, 3> mem_;
  std::vector<std::int64_t> comm_; ///< latency across boundary s -> s+1
  std::array<std::vector<int>, 3> count_;
  std::array<std::vector<std::int64_t>, 3> end_;
  std::vector<std::int64_t> e_;
  std::vector<double> mem_now_;
  std::vector<std::int64_t> bub_;
  std::int64_t max_bubble_ = 0; ///< bub only grows, so the running max is max_s bub[s]
  std::vector<std::vector<std::pair<int, int>>> order_;
  std::vector<std::vector<std::int64_t>> order_end_;
};

Schedule zb_auto_with_share(const Scenario &scenario, double cap_share) {
  return zb_auto_timed(scenario, cap_share).schedule;
}

} // namespace

std::optional<Error> zb_auto_precondition(const Scenario &scenario,
                                          const GeneratorOptions & /*options*/) {
  if (scenario.chunks != 1 || scenario.pipes != 1)
    return Error("schedule 'zb-auto' needs the single-wave placement (one stage per device)");
  for (int s = 0; s < scenario.stage_count(); ++s) {
    if (!(pass_memory(scenario, s).forward > 0)) {
      return Error(
          fmt::format("schedule 'zb-auto' needs a positive stored activation on stage {}", s));
    }
  }
  return std::nullopt;
}

TimedSchedule zb_auto_timed(const Scenario &scenario, double cap_share) {
  enforce(zb_auto_precondition(scenario, {}));
  std::vector<double> max_mem;
  for (int s = 0; s < scenario.stage_count(); ++s) {
    const double mem_f = pass_memory(scenario, s).forward;
    if (over_cap(mem_f, cap_share * mem_f)) {
      throw cannot_fit_memory(s, cap_share);
    }
    max_mem.push_back(cap_share * mem_f);
  }
  // The 8 flag combinations, each outer to inner in the order (true, false); the first strictly
  // better max span wins (zb.py initial_solution).
  std::optional<ZbAutoRun> best;
  for (const bool allow_bubble : {true, false}) {
    for (const bool prioritize_b : {true, false}) {
      for (const bool no_bubble_greedy : {true, false}) {
        ZbAutoRun run(scenario, max_mem, Flags{allow_bubble, prioritize_b, no_bubble_greedy});
        run.run();
        if (!best || run.score() < best->score())
          best.emplace(std::move(run));
      }
    }
  }
  return best->result(scenario);
}

Schedule zb_auto(const Scenario &scenario, const GeneratorOptions & /*options*/) {
  const double cap = scenario.activations.cap.value_or(3.0 * scenario.microbatches);
  return zb_auto_with_share(scenario, cap);
}

Schedule zb_1p(const Scenario &scenario, const GeneratorOptions & /*options*/) {
  return zb_auto_with_share(scenario, scenario.devices);
}

Schedule zb_2p(const Scenario &scenario, const GeneratorOptions & /*options*/) {
  return zb_auto_with_share(scenario, 2.0 * scenario.devices);
}

} // namespace ppsim::schedules
