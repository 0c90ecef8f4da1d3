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

/// One op of the ILP with its start window (ticks) and its first z variable. An optional op
/// (R, RW, RBW) has a binary `chosen` that its start binaries sum to; a mandatory one sums to 1.
struct IlpOp {
  OpKind kind;
  int stage = 0, microbatch = 0, device = 0;
  std::int64_t duration = 0, earliest = 0, latest = 0;
  int first_variable = 0;
  int chosen = -1; ///< the op's indicator variable; -1 for a mandatory op
};

/// The op slots of one (stage, microbatch), in the order their ops run on the device, so that
/// ties between zero-length ops decode in a valid order.
enum Slot : int { kForward, kRecompute, kBackward, kRecomputeWeight, kRecomputeBackward, kWeight };
constexpr int kSlots = 6;

/// Builds, solves and decodes the ILP.
class TimeIndexedIlp {
public:
  /// The feasibility question "do all ops fit in [0, horizon)?".
  TimeIndexedIlp(const Scenario &scenario, BackwardForm form, bool recompute, Ticks horizon)
      : scenario_(scenario), form_(form), recompute_(recompute), horizon_(horizon.count()) {
    add_ops();
  }

  /// True when some mandatory op cannot start inside the horizon: no schedule ends by then. An
  /// optional op with an empty window is only a choice the horizon rules out (docs/bounds.md,
  /// "Exact optimum").
  [[nodiscard]] bool empty_window() const { return empty_window_; }

  [[nodiscard]] std::int64_t start_variables() const {
    std::int64_t count = 0;
    for (const IlpOp &op : ops_)
      count += op.latest - op.earliest + 1;
    return count;
  }

  /// Builds and solves within `deadline`: the time limit bounds the model's construction too
  /// (docs/bounds.md); past it the result has no solution.
  solver::MilpSolution solve(std::chrono::steady_clock::time_point deadline,
                             std::int64_t node_limit) {
    deadline_ = deadline;
    try {
      build();
    } catch (const BuildDeadline &) {
      solver::MilpSolution none;
      none.limit = solver::Limit::time;
      return none;
    }
    const double remaining =
        std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    return solver::solve(model_, {.time_limit_seconds = std::max(0.0, remaining),
                                  .node_limit = node_limit});
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
  // The engine's duration of the op (the runtime's overhead included).
  Ticks stage_duration(OpKind kind, int s) const {
    return op_duration(scenario_, Op::make(kind, s, 0));
  }

  OpKind backward_kind() const {
    return form_ == BackwardForm::full ? OpKind::backward_full : OpKind::backward_input;
  }

  /// The op of `slot` for (s, j), or nullptr when the model has none (an optional op the horizon
  /// rules out, W of a full backward).
  const IlpOp *find(Slot slot, int s, int j) const {
    const int entry =
        op_index_[at((slot * scenario_.stage_count() + s) * scenario_.microbatches + j)];
    return entry < 0 ? nullptr : &ops_[at(entry)];
  }
  const IlpOp &get(Slot slot, int s, int j) const {
    const IlpOp *op = find(slot, s, j);
    PPSIM_ASSERT(op != nullptr);
    return *op;
  }

  /// Adds the op of `slot` for (s, j) with the window [earliest, horizon - duration - tail]; an
  /// optional op whose window is empty is left out (it cannot run by this horizon).
  void add_op(Slot slot, OpKind kind, int s, int j, std::int64_t earliest, std::int64_t tail,
              bool optional) {
    IlpOp op{kind,     s, j, scenario_.stage_device[at(s)], stage_duration(kind, s).count(),
             earliest, 0, 0};
    op.latest = horizon_ - op.duration - tail;
    if (op.latest < op.earliest) {
      empty_window_ = empty_window_ || !optional;
      return;
    }
    op.chosen = optional ? 0 : -1; // the variable is made in build()
    op_index_[at((slot * scenario_.stage_count() + s) * scenario_.microbatches + j)] =
        static_cast<int>(ops_.size());
    ops_.push_back(op);
  }

  // Windows: earliest start from PF (entry forwards in microbatch order), latest start from the
  // shortest remaining path after the op (docs/bounds.md, "Model and assumptions (all bounds)").
  // The recomputations are optional: R when a cap can bind, RW and RBW too with a split backward
  // (docs/model.md, "Dependencies"), as the engine runs them.
  void add_ops() {
    const int stages = scenario_.stage_count(), m = scenario_.microbatches;
    op_index_.assign(at(kSlots * stages * m), -1);
    const PathProfile profile = path_profile(scenario_, form_);
    const int per_pipe = scenario_.stages_per_pipe();
    const bool split = form_ == BackwardForm::split;
    for (int s = 0; s < stages; ++s) {
      const StageCosts &costs = scenario_.stage_costs[at(s)];
      const int entry = (s / per_pipe) * per_pipe;
      const std::int64_t last_w = split ? scenario_.stage_costs[at(entry)].backward_weight.count()
                                        : 0;
      const std::int64_t backward = stage_duration(backward_kind(), s).count();
      const std::int64_t weight = split ? costs.backward_weight.count() : 0;
      const std::int64_t backward_tail =
          std::max(profile.backward_suffix[at(s)].count() + last_w, weight);
      for (int j = 0; j < m; ++j) {
        const std::int64_t forward_start = profile.forward_prefix[at(s)].count() +
                                           j * scenario_.stage_costs[at(entry)].forward.count();
        const std::int64_t backward_start =
            forward_start + profile.kept_lifespan[at(s)].count() - backward;
        add_op(kForward, OpKind::forward, s, j, forward_start,
               profile.kept_lifespan[at(s)].count() - costs.forward.count() + backward_tail,
               false);
        if (recompute_)
          add_op(kRecompute, OpKind::recompute_forward, s, j,
                 forward_start + costs.forward.count(), backward + backward_tail, true);
        add_op(kBackward, backward_kind(), s, j, backward_start, backward_tail, false);
        if (!split)
          continue;
        if (recompute_) {
          add_op(kRecomputeWeight, OpKind::recompute_weight_inputs, s, j,
                 backward_start + backward, weight, true);
          add_op(kRecomputeBackward, OpKind::recompute_full_backward, s, j,
                 backward_start + backward, weight, true);
        }
        add_op(kWeight, OpKind::backward_weight, s, j, backward_start + backward, 0, false);
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

  /// Adds sign * [op ended at or before tick t] to `terms`.
  void add_ended(std::vector<solver::Term> &terms, const IlpOp &op, std::int64_t t,
                 double sign) const {
    add_started(terms, op, t - op.duration, sign);
  }

  /// Adds sign * [op running during tick t] to `terms`.
  void add_running(std::vector<solver::Term> &terms, const IlpOp &op, std::int64_t t,
                   double sign) const {
    for (std::int64_t tick = std::max(op.earliest, t - op.duration + 1);
         tick <= std::min(op.latest, t); ++tick)
      terms.push_back({op.first_variable + static_cast<int>(tick - op.earliest), sign});
  }

  /// start(after) - start(before) >= lag, switched off (by the horizon as big M) unless the
  /// optional op among them is chosen.
  void precedence(const IlpOp &before, const IlpOp &after, std::int64_t lag) {
    std::vector<solver::Term> terms = start_terms(after, 1.0);
    const std::vector<solver::Term> minus = start_terms(before, -1.0);
    terms.insert(terms.end(), minus.begin(), minus.end());
    double rhs = static_cast<double>(lag);
    for (const IlpOp *op : {&before, &after}) {
      if (op->chosen < 0)
        continue;
      terms.push_back({op->chosen, -static_cast<double>(horizon_)});
      rhs -= static_cast<double>(horizon_);
    }
    model_.add_constraint("", std::move(terms), solver::Sense::greater_equal, rhs);
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
    // Each mandatory op starts once; an optional one exactly when chosen.
    for (IlpOp &op : ops_) {
      std::vector<solver::Term> terms;
      add_started(terms, op, op.latest, 1.0);
      if (op.chosen < 0) {
        model_.add_constraint("", std::move(terms), solver::Sense::equal, 1.0);
        continue;
      }
      op.chosen = model_.add_binary(
          fmt::format("x_{}_{}_{}", op_kind_token(op.kind), op.stage, op.microbatch));
      terms.push_back({op.chosen, -1.0});
      model_.add_constraint("", std::move(terms), solver::Sense::equal, 0.0);
    }
    const OpKind back = backward_kind();
    for (int s = 0; s < stages; ++s) {
      for (int j = 0; j < m; ++j) {
        const IlpOp &forward = get(kForward, s, j);
        const IlpOp &backward = get(kBackward, s, j);
        if (!scenario_.is_pipe_entry(s))
          precedence(get(kForward, s - 1, j), forward,
                     stage_duration(OpKind::forward, s - 1).count() + crossing(s - 1).count());
        const IlpOp *gradient = scenario_.is_pipe_exit(s) ? nullptr : &get(kBackward, s + 1, j);
        const std::int64_t gradient_lag =
            gradient ? stage_duration(back, s + 1).count() + crossing(s).count() : 0;
        if (gradient)
          precedence(*gradient, backward, gradient_lag);
        else
          precedence(forward, backward, forward.duration);
        if (const IlpOp *recompute = find(kRecompute, s, j)) {
          precedence(forward, *recompute, forward.duration);
          precedence(*recompute, backward, recompute->duration);
          if (scenario_.remat_timing == RematTiming::lumped && gradient)
            precedence(*gradient, *recompute, gradient_lag);
        }
        if (form_ != BackwardForm::split)
          continue;
        const IlpOp &weight = get(kWeight, s, j);
        precedence(backward, weight, backward.duration);
        std::vector<solver::Term> at_most_one;
        for (const Slot slot : {kRecomputeWeight, kRecomputeBackward}) {
          if (const IlpOp *rebuild = find(slot, s, j)) {
            precedence(backward, *rebuild, backward.duration);
            precedence(*rebuild, weight, rebuild->duration);
            at_most_one.push_back({rebuild->chosen, 1.0});
          }
        }
        if (at_most_one.size() > 1)
          model_.add_constraint("", std::move(at_most_one), solver::Sense::less_equal, 1.0);
      }
      if (scenario_.is_pipe_entry(s))
        for (int j = 0; j + 1 < m; ++j)
          precedence(get(kForward, s, j), get(kForward, s, j + 1),
                     stage_duration(OpKind::forward, s).count());
    }
    check_deadline();
    add_device_capacity();
    if (recompute_)
      add_memory();
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
        for (const IlpOp &op : ops_)
          if (op.device == g && op.duration > 0)
            add_running(terms, op, t, 1.0);
        if (terms.size() > 1)
          model_.add_constraint("", std::move(terms), solver::Sense::less_equal, 1.0);
      }
    }
  }

  /// One way a share of an activation is resident: from the start (or the end) of `begin` to the
  /// end of `end`, unless one of the optional ops `off_when` is chosen.
  struct Phase {
    const IlpOp *begin;
    bool from_end;
    const IlpOp *end;
    std::vector<const IlpOp *> off_when;
  };

  /// A share of `amount` of one activation, resident at tick t when some phase covers t: a
  /// continuous u per tick in [from, to) with u >= [begin by t] - [end ended by t] - sum of
  /// chosen(off_when), counted against the cap of the device.
  void add_share(double amount, int device, std::int64_t from, std::int64_t to,
                 const std::vector<Phase> &phases) {
    if (amount <= 0)
      return;
    for (std::int64_t t = std::max<std::int64_t>(from, 0); t < std::min(to, horizon_); ++t) {
      const int u = model_.add_variable("", 0, 1, solver::VariableKind::continuous);
      for (const Phase &phase : phases) {
        std::vector<solver::Term> terms{{u, 1.0}};
        if (phase.from_end)
          add_ended(terms, *phase.begin, t, -1.0);
        else
          add_started(terms, *phase.begin, t, -1.0);
        add_ended(terms, *phase.end, t, 1.0);
        for (const IlpOp *op : phase.off_when)
          terms.push_back({op->chosen, 1.0});
        model_.add_constraint("", std::move(terms), solver::Sense::greater_equal, 0.0);
      }
      per_device_tick_[at(device)][at(static_cast<int>(t))].push_back({u, amount});
    }
  }

  // The count and zb models of docs/model.md, "Memory", exactly as sim/memory.cpp accounts them
  // (no checkpoint bytes and no transients there, save the forward that RBW reruns): `stored` from
  // the start of a kept F or of R to the end of the backward; with a split backward what W needs
  // (`kept_after_b`) from the end of B to the end of W, its RW share (`weight_input_share`) dropped
  // at the end of B and taken again at the start of RW or RBW, the rest at the start of RBW; what W
  // leaves (`kept_after_w`) from then on.
  void add_memory() {
    const int stages = scenario_.stage_count(), m = scenario_.microbatches;
    per_device_tick_.assign(at(scenario_.devices),
                            std::vector<std::vector<solver::Term>>(at(static_cast<int>(horizon_))));
    for (int s = 0; s < stages; ++s) {
      check_deadline();
      const StageMemory &memory = scenario_.activations.stages[at(s)];
      for (int j = 0; j < m; ++j) {
        const IlpOp &forward = get(kForward, s, j);
        const IlpOp &backward = get(kBackward, s, j);
        const IlpOp *recompute = find(kRecompute, s, j);
        const int device = forward.device;
        std::vector<Phase> held{{&forward, false, &backward, {}}};
        if (recompute) {
          held.front().off_when.push_back(recompute);
          held.push_back({recompute, false, &backward, {}});
        }
        add_share(memory.stored, device, forward.earliest, backward.latest + backward.duration,
                  held);
        const IlpOp *last = &backward;
        if (form_ == BackwardForm::split) {
          const IlpOp &weight = get(kWeight, s, j);
          const IlpOp *rw = find(kRecomputeWeight, s, j);
          const IlpOp *rbw = find(kRecomputeBackward, s, j);
          std::vector<Phase> rest{{&backward, true, &weight, {}}};
          std::vector<Phase> rebuilt_by_rw{{&backward, true, &weight, {}}};
          if (rbw) {
            rest.front().off_when.push_back(rbw);
            rest.push_back({rbw, false, &weight, {}});
            rebuilt_by_rw.front().off_when.push_back(rbw);
            rebuilt_by_rw.push_back({rbw, false, &weight, {}});
          }
          if (rw) {
            rebuilt_by_rw.front().off_when.push_back(rw);
            rebuilt_by_rw.push_back({rw, false, &weight, {}});
          }
          const std::int64_t from = backward.earliest + backward.duration;
          const std::int64_t to = weight.latest + weight.duration;
          add_share(memory.kept_after_b - memory.weight_input_share, device, from, to, rest);
          add_share(memory.weight_input_share, device, from, to, rebuilt_by_rw);
          if (rbw) // RBW reruns the forward: `stored` on top while it runs (sim/memory.cpp)
            for (std::int64_t t = rbw->earliest; t < rbw->latest + rbw->duration; ++t)
              add_running(per_device_tick_[at(device)][at(static_cast<int>(t))], *rbw, t,
                          memory.stored);
          last = &weight;
        }
        if (memory.kept_after_w > 0)
          for (std::int64_t t = last->earliest + last->duration; t < horizon_; ++t)
            add_ended(per_device_tick_[at(device)][at(static_cast<int>(t))], *last, t,
                      memory.kept_after_w);
      }
    }
    for (auto &device : per_device_tick_)
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
  std::vector<std::vector<std::vector<solver::Term>>> per_device_tick_;
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
};

} // namespace

ExactResult exact_optimum(const Scenario &scenario, BackwardForm form,
                          const ExactOptions &options) {
  if (scenario.memory_model == MemoryModel::bytes)
    throw Error("the exact optimum supports the count and zb memory models, not bytes");
  // The ILP charges a transfer as a fixed delay: a link busy with another transfer, or a sender
  // busy sending, is outside it (docs/bounds.md, "Exact optimum").
  if (scenario.link.contention || scenario.link.blocking)
    throw Error("", 0,
                scenario.link.contention ? "cluster.link.contention" : "cluster.link.blocking",
                "the exact optimum assumes links without contention and non-blocking sends "
                "(cluster.runtime = \"ideal\")");
  // An overlapped F&B op shorter than its parts is outside the model (as for the bounds).
  if (scenario.overlap_duration)
    throw Error("", 0, "pipeline.overlap_fb",
                "the exact optimum takes an overlapped F&B op as long as its parts; leave "
                "overlap_fb at its default");
  // A zero-length op has no tick of its own: its memory, and its order against an op it waits
  // for that starts on the same tick, would not be the engine's.
  const bool recompute_possible = cap_can_bind(scenario);
  for (const StageCosts &costs : scenario.stage_costs) {
    const bool zero_work = costs.forward.count() == 0 || costs.backward_input.count() == 0;
    const bool zero_recompute =
        recompute_possible &&
        (costs.recompute_forward.count() == 0 ||
         (form == BackwardForm::split && (costs.recompute_weight_inputs.count() == 0 ||
                                          costs.recompute_full_backward.count() == 0)));
    if (zero_work || zero_recompute)
      throw Error("the exact optimum needs every F, B and recomputation longer than 0 ticks");
  }
  // A level's R recomputes part of a stage at its own cost: the model has no such op, so its
  // optimum would not bound the schedules that use one (docs/bounds.md, "Exact optimum").
  for (const StageMemory &stage : scenario.activations.stages)
    if (!stage.checkpoint_levels.empty())
      throw Error("", 0, "remat.checkpoint_levels",
                  "the exact optimum does not model checkpoint levels; leave them out");
  const bool recompute = recompute_possible;
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
    const solver::MilpSolution solved = ilp.solve(deadline, options.node_limit);
    result.solve_seconds += solved.seconds;
    PPSIM_ASSERT(solved.status != solver::Status::unbounded);
    if (solved.status == solver::Status::infeasible) {
      none_ends_by(horizon);
      continue;
    }
    if (!solved.has_solution()) {
      result.limit = solved.limit;
      result.method = solved.status == solver::Status::failed
                          ? "ilp (solver failed)"
                          : fmt::format("ilp ({})", solver::limit_name(solved.limit));
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
