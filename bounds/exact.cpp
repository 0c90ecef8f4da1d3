// Exact optimum by a time-indexed ILP (docs/bounds.md, "Exact optimum"). Time is in ticks; op o may
// start at any tick of its window [earliest, latest], derived from the path quantities of
// docs/bounds.md, "Model and assumptions (all bounds)" and the horizon H (makespan of the best
// registered schedule).
#include "bounds/exact.h"
#include "base/index.h"

#include "base/assert.h"
#include "base/error.h"
#include "bounds/analyzer.h"
#include "bounds/incumbent.h"
#include "sim/memory.h"
#include "sim/metrics.h"
#include "solver/milp.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

namespace ppsim {
namespace {

/// One op of the ILP with its start window (ticks) and its first z variable.
struct IlpOp {
  OpKind kind;
  int stage = 0, microbatch = 0, device = 0;
  std::int64_t duration = 0, earliest = 0, latest = 0;
  int first_variable = 0;
};

/// Builds, solves and decodes the ILP.
class TimeIndexedIlp {
public:
  /// The feasibility question "do all ops fit in [0, horizon)?".
  TimeIndexedIlp(const Scenario &scenario, BackwardForm form, bool recompute, Ticks horizon)
      : scenario_(scenario), form_(form), recompute_(recompute), horizon_(horizon.count()) {
    add_ops();
  }

  /// True when some op cannot start inside the horizon: no schedule ends by then.
  [[nodiscard]] bool empty_window() const { return empty_window_; }

  [[nodiscard]] std::int64_t start_variables() const {
    std::int64_t count = 0;
    for (const IlpOp &op : ops_)
      count += op.latest - op.earliest + 1;
    return count;
  }

  /// Builds and solves within `deadline`: the time limit bounds the model's construction too
  /// (docs/bounds.md); past it the result has no solution.
  solver::MilpSolution solve(std::chrono::steady_clock::time_point deadline) {
    deadline_ = deadline;
    try {
      build();
    } catch (const BuildDeadline &) {
      return {};
    }
    const double remaining =
        std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    return solver::solve(model_, {.time_limit_seconds = std::max(0.0, remaining)});
  }

  /// Per-device orders of a solution, sorted by start then end (zero-length ops first).
  Schedule decode(const solver::MilpSolution &result) const {
    struct Placed {
      std::int64_t start, end;
      Op op;
    };
    std::vector<std::vector<Placed>> placed(at(scenario_.devices));
    for (const IlpOp &op : ops_) {
      for (std::int64_t t = op.earliest; t <= op.latest; ++t) {
        if (result.values[at(op.first_variable + static_cast<int>(t - op.earliest))] < 0.5)
          continue;
        placed[at(op.device)].push_back(
            {t, t + op.duration, Op::make(op.kind, op.stage, op.microbatch)});
      }
    }
    Schedule schedule;
    schedule.name = "optimal";
    for (std::vector<Placed> &device : placed) {
      std::stable_sort(device.begin(), device.end(), [](const Placed &a, const Placed &b) {
        return a.start != b.start ? a.start < b.start : a.end < b.end;
      });
      std::vector<Op> ops;
      for (const Placed &entry : device)
        ops.push_back(entry.op);
      schedule.device_ops.push_back(std::move(ops));
    }
    return schedule;
  }

private:
  Ticks stage_duration(OpKind kind, int s) const {
    const StageCosts &costs = scenario_.stage_costs[at(s)];
    switch (kind) {
    case OpKind::forward:
      return costs.forward;
    case OpKind::backward_full:
      return costs.backward_input + costs.backward_weight;
    case OpKind::backward_input:
      return costs.backward_input;
    case OpKind::backward_weight:
      return costs.backward_weight;
    case OpKind::recompute_forward:
      return costs.recompute_forward;
    default:
      PPSIM_ASSERT(false);
    }
    return Ticks{0};
  }

  OpKind backward_kind() const {
    return form_ == BackwardForm::full ? OpKind::backward_full : OpKind::backward_input;
  }

  int index(int kind_slot, int s, int j) const {
    return op_index_[at((kind_slot * scenario_.stage_count() + s) * scenario_.microbatches + j)];
  }

  void add_op(int kind_slot, OpKind kind, int s, int j, std::int64_t earliest, std::int64_t tail) {
    IlpOp op{kind,     s, j, scenario_.stage_device[at(s)], stage_duration(kind, s).count(),
             earliest, 0, 0};
    op.latest = horizon_ - op.duration - tail;
    if (op.latest < op.earliest)
      empty_window_ = true;
    op_index_[at((kind_slot * scenario_.stage_count() + s) * scenario_.microbatches + j)] =
        static_cast<int>(ops_.size());
    ops_.push_back(op);
  }

  // Windows: earliest start from PF (entry forwards in microbatch order), latest start from the
  // shortest remaining path after the op (docs/bounds.md, "Model and assumptions (all bounds)").
  void add_ops() {
    const int stages = scenario_.stage_count(), m = scenario_.microbatches;
    op_index_.assign(at(4 * stages * m), -1);
    const PathProfile profile = path_profile(scenario_, form_);
    const int per_pipe = scenario_.stages_per_pipe();
    for (int s = 0; s < stages; ++s) {
      const StageCosts &costs = scenario_.stage_costs[at(s)];
      const int entry = (s / per_pipe) * per_pipe;
      const std::int64_t last_w = form_ == BackwardForm::split
                                      ? scenario_.stage_costs[at(entry)].backward_weight.count()
                                      : 0;
      const std::int64_t backward = stage_duration(backward_kind(), s).count();
      const std::int64_t backward_tail =
          std::max(profile.backward_suffix[at(s)].count() + last_w,
                   form_ == BackwardForm::split ? costs.backward_weight.count() : 0);
      for (int j = 0; j < m; ++j) {
        const std::int64_t forward_start = profile.forward_prefix[at(s)].count() +
                                           j * scenario_.stage_costs[at(entry)].forward.count();
        const std::int64_t backward_start =
            forward_start + profile.kept_lifespan[at(s)].count() - backward;
        add_op(0, OpKind::forward, s, j, forward_start,
               profile.kept_lifespan[at(s)].count() - costs.forward.count() + backward_tail);
        add_op(1, backward_kind(), s, j, backward_start, backward_tail);
        if (form_ == BackwardForm::split)
          add_op(2, OpKind::backward_weight, s, j, backward_start + backward, 0);
        if (recompute_)
          add_op(3, OpKind::recompute_forward, s, j, forward_start + costs.forward.count(),
                 backward + backward_tail);
      }
    }
    int next = 0;
    for (IlpOp &op : ops_) {
      op.first_variable = next;
      next += static_cast<int>(op.latest - op.earliest + 1);
    }
  }

  std::vector<solver::Term> start_terms(const IlpOp &op, double sign) const {
    std::vector<solver::Term> terms;
    for (std::int64_t t = op.earliest; t <= op.latest; ++t)
      terms.push_back(
          {op.first_variable + static_cast<int>(t - op.earliest), sign * static_cast<double>(t)});
    return terms;
  }

  /// Adds sign * [op started at or before tick t] to `terms`.
  void add_started(std::vector<solver::Term> &terms, const IlpOp &op, std::int64_t t,
                   double sign) const {
    for (std::int64_t tick = op.earliest; tick <= std::min(t, op.latest); ++tick)
      terms.push_back({op.first_variable + static_cast<int>(tick - op.earliest), sign});
  }

  /// start(after) - start(before) [+ big_m * keep] >= lag.
  void precedence(const IlpOp &before, const IlpOp &after, std::int64_t lag,
                  std::optional<int> keep = std::nullopt) {
    std::vector<solver::Term> terms = start_terms(after, 1.0);
    const std::vector<solver::Term> minus = start_terms(before, -1.0);
    terms.insert(terms.end(), minus.begin(), minus.end());
    if (keep)
      terms.push_back({*keep, static_cast<double>(horizon_)});
    model_.add_constraint("", std::move(terms), solver::Sense::greater_equal,
                          static_cast<double>(lag));
  }

  Ticks crossing(int s) const {
    if (scenario_.is_pipe_exit(s) ||
        scenario_.stage_device[at(s)] == scenario_.stage_device[at(s + 1)] ||
        at(s) >= scenario_.boundary_transfer.size())
      return Ticks{0};
    return scenario_.boundary_transfer[at(s)];
  }

  void build() {
    const int stages = scenario_.stage_count(), m = scenario_.microbatches;
    for (const IlpOp &op : ops_)
      for (std::int64_t t = op.earliest; t <= op.latest; ++t)
        model_.add_binary(
            fmt::format("z_{}_{}_{}_{}", op_kind_token(op.kind), op.stage, op.microbatch, t));
    std::vector<int> keep(at(stages * m), -1);
    for (int s = 0; s < stages && recompute_; ++s)
      for (int j = 0; j < m; ++j)
        keep[at(s * m + j)] = model_.add_binary(fmt::format("y_{}_{}", s, j));
    // Each op starts once; R exactly when the activation is not kept.
    for (const IlpOp &op : ops_) {
      std::vector<solver::Term> terms;
      add_started(terms, op, op.latest, 1.0);
      double rhs = 1.0;
      if (op.kind == OpKind::recompute_forward) {
        terms.push_back({keep[at(op.stage * m + op.microbatch)], 1.0});
      }
      model_.add_constraint("", std::move(terms), solver::Sense::equal, rhs);
    }
    const OpKind back = backward_kind();
    for (int s = 0; s < stages; ++s) {
      for (int j = 0; j < m; ++j) {
        const IlpOp &forward = ops_[at(index(0, s, j))];
        const IlpOp &backward = ops_[at(index(1, s, j))];
        if (!scenario_.is_pipe_entry(s))
          precedence(ops_[at(index(0, s - 1, j))], forward,
                     stage_duration(OpKind::forward, s - 1).count() + crossing(s - 1).count());
        if (scenario_.is_pipe_exit(s)) {
          precedence(forward, backward, forward.duration);
        } else {
          precedence(ops_[at(index(1, s + 1, j))], backward,
                     stage_duration(back, s + 1).count() + crossing(s).count());
        }
        if (form_ == BackwardForm::split)
          precedence(backward, ops_[at(index(2, s, j))], backward.duration);
        if (recompute_) {
          const IlpOp &recompute = ops_[at(index(3, s, j))];
          const int kept = keep[at(s * m + j)];
          precedence(forward, recompute, forward.duration, kept);
          precedence(recompute, backward, recompute.duration, kept);
          if (scenario_.remat_timing == RematTiming::lumped && !scenario_.is_pipe_exit(s))
            precedence(ops_[at(index(1, s + 1, j))], recompute,
                       stage_duration(back, s + 1).count() + crossing(s).count(), kept);
        }
      }
      if (scenario_.is_pipe_entry(s))
        for (int j = 0; j + 1 < m; ++j)
          precedence(ops_[at(index(0, s, j))], ops_[at(index(0, s, j + 1))],
                     stage_duration(OpKind::forward, s).count());
    }
    check_deadline();
    add_device_capacity();
    if (recompute_)
      add_memory(keep);
  }

  struct BuildDeadline {};
  void check_deadline() const {
    if (std::chrono::steady_clock::now() >= deadline_)
      throw BuildDeadline{};
  }

  void add_device_capacity() {
    for (int g = 0; g < scenario_.devices; ++g) {
      check_deadline();
      for (std::int64_t t = 0; t < horizon_; ++t) {
        std::vector<solver::Term> terms;
        for (const IlpOp &op : ops_) {
          if (op.device != g || op.duration == 0)
            continue;
          for (std::int64_t tick = std::max(op.earliest, t - op.duration + 1);
               tick <= std::min(op.latest, t); ++tick)
            terms.push_back({op.first_variable + static_cast<int>(tick - op.earliest), 1.0});
        }
        if (terms.size() > 1)
          model_.add_constraint("", std::move(terms), solver::Sense::less_equal, 1.0);
      }
    }
  }

  // Residency u of each share of each activation at each tick (docs/bounds.md, "Exact optimum",
  // constraint 4): kept: u >= started(F) - ended(release) - (1 - y); recomputed: u >= started(R) -
  // ended(release).
  void add_memory(const std::vector<int> &keep) {
    const int stages = scenario_.stage_count(), m = scenario_.microbatches;
    std::vector<std::vector<std::vector<solver::Term>>> per_device_tick(
        at(scenario_.devices),
        std::vector<std::vector<solver::Term>>(at(static_cast<int>(horizon_))));
    for (int s = 0; s < stages; ++s) {
      check_deadline();
      const StageMemory &memory = scenario_.activations.stages[at(s)];
      struct Share {
        int release_slot;
        double size;
      };
      std::vector<Share> shares;
      if (form_ == BackwardForm::full) {
        shares.push_back({1, memory.stored});
      } else {
        shares.push_back({1, memory.stored - memory.kept_after_b});
        shares.push_back({2, memory.kept_after_b});
      }
      for (int j = 0; j < m; ++j) {
        const IlpOp &forward = ops_[at(index(0, s, j))];
        const IlpOp &recompute = ops_[at(index(3, s, j))];
        for (const Share &share : shares) {
          if (share.size <= 0)
            continue;
          const IlpOp &release = ops_[at(index(share.release_slot, s, j))];
          for (std::int64_t t = forward.earliest; t < release.latest + release.duration; ++t) {
            const int u = model_.add_variable("", 0, 1, solver::VariableKind::continuous);
            std::vector<solver::Term> kept{{u, 1.0}, {keep[at(s * m + j)], -1.0}};
            add_started(kept, forward, t, -1.0);
            add_started(kept, release, t - release.duration, 1.0);
            model_.add_constraint("", std::move(kept), solver::Sense::greater_equal, -1.0);
            std::vector<solver::Term> recomputed{{u, 1.0}};
            add_started(recomputed, recompute, t, -1.0);
            add_started(recomputed, release, t - release.duration, 1.0);
            model_.add_constraint("", std::move(recomputed), solver::Sense::greater_equal, 0.0);
            per_device_tick[at(forward.device)][at(static_cast<int>(t))].push_back({u, share.size});
          }
        }
      }
    }
    for (auto &device : per_device_tick)
      for (std::vector<solver::Term> &terms : device)
        if (!terms.empty())
          model_.add_constraint("", std::move(terms), solver::Sense::less_equal,
                                *scenario_.activations.cap);
  }

  const Scenario &scenario_;
  BackwardForm form_;
  bool recompute_;
  std::int64_t horizon_;
  std::vector<IlpOp> ops_;
  std::vector<int> op_index_;
  bool empty_window_ = false;
  solver::Model model_;
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
};

} // namespace

ExactResult exact_optimum(const Scenario &scenario, BackwardForm form,
                          const ExactOptions &options) {
  if (scenario.memory_model == MemoryModel::bytes)
    throw Error("the exact optimum supports the count and zb memory models, not bytes");
  const bool recompute = cap_can_bind(scenario);
  const BoundsReport bounds = compute_bounds(scenario, {form, "", 0});
  if (!bounds.cap_fits_one_activation)
    throw Error("no schedule fits the memory cap: it is below one activation of some stage");
  Incumbent incumbent =
      options.incumbent ? *options.incumbent : best_known_schedule(scenario, form, recompute);
  ExactResult result;
  result.incumbent = incumbent.name;
  result.makespan = incumbent.makespan;
  result.schedule = incumbent.schedule;
  result.lower_bound = bounds.best_lower_bound;
  if (options.stop_when_bound_met && incumbent.makespan <= bounds.best_lower_bound) {
    result.lower_bound = incumbent.makespan;
    result.proven_optimal = true;
    result.method = "lower bound met";
    return result;
  }
  // Decide "is there a schedule ending by H?" for H = LB, LB + 1, ... below the incumbent's
  // makespan: each question is a feasibility ILP whose windows shrink with H, which CBC answers
  // much faster than the optimization over the incumbent's horizon.
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(std::clamp(options.time_limit_seconds, 0.0, 1e7)));
  result.method = "ilp";
  ProgressCounter counter(
      options.progress,
      static_cast<std::size_t>((incumbent.makespan - bounds.best_lower_bound).count()));
  const auto none_ends_by = [&](Ticks horizon) {
    result.lower_bound = horizon + Ticks{1};
    counter.step_done(fmt::format("no schedule ends by {}", scenario.time_scale.readable(horizon)));
  };
  for (Ticks horizon = bounds.best_lower_bound; horizon < incumbent.makespan; horizon += Ticks{1}) {
    TimeIndexedIlp ilp(scenario, form, recompute, horizon);
    if (ilp.empty_window()) {
      none_ends_by(horizon);
      continue;
    }
    result.start_variables = std::max(result.start_variables, ilp.start_variables());
    if (ilp.start_variables() > options.max_start_variables)
      throw Error(fmt::format(
          "instance too large for the exact optimum: {} start-time variables (p = {}, m = {}, "
          "horizon {} ticks), the limit is {}; use smaller p, m or coarser costs",
          ilp.start_variables(), scenario.devices, scenario.microbatches, horizon.count(),
          options.max_start_variables));
    const solver::MilpSolution solved = ilp.solve(deadline);
    result.solve_seconds += solved.seconds;
    PPSIM_ASSERT(solved.status != solver::Status::unbounded);
    if (solved.status == solver::Status::infeasible) {
      none_ends_by(horizon);
      continue;
    }
    if (!solved.has_solution()) {
      result.method = "ilp (time limit)";
      return result;
    }
    Schedule schedule = ilp.decode(solved);
    const Simulation replay = simulate(scenario, schedule);
    // The ASAP replay of the ILP's orders ends no later than the ILP's times, and memory
    // depends on the orders only.
    PPSIM_ASSERT(replay.metrics.feasible && replay.metrics.makespan <= horizon);
    result.makespan = replay.metrics.makespan;
    result.schedule = std::move(schedule);
    // The horizons above this one need no question.
    counter.steps_done(static_cast<std::size_t>((incumbent.makespan - horizon).count()),
                       fmt::format("a schedule ends by {}", scenario.time_scale.readable(horizon)));
    break;
  }
  result.proven_optimal = true;
  result.lower_bound = result.makespan;
  return result;
}

} // namespace ppsim
