#include "remat/stage_remat_ilp.h"

#include "sim/io/decimal.h"

#include "sim/assert.h"
#include "sim/dependencies.h"
#include "sim/error.h"
#include "sim/memory.h"
#include "sim/op_locator.h"
#include "sim/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

namespace ppsim {
namespace {

using solver::Sense;
using solver::Term;

// One option variable per kind of decision; `none` marks a constant.
enum Choice { kX = 0, kY = 1, kZ = 2, kChoiceCount = 3 };

// value = constant + sum_c coefficient[c] * variable(c) for the (s,j) the op belongs to.
struct Affine {
  double constant = 0;
  std::array<double, kChoiceCount> coefficient{};
};

struct AffineEffect {
  Affine alloc, release, transient;
};

// The memory effect of every kind of op of one stage as an affine function of that (s,j)'s
// options, read from the engine's own model (sim/memory.h) on one-microbatch probe orders: an
// op's effect depends on one option at most (F and R on x; B, RW, RBW on y and z), so the
// differences between the probes are exact coefficients.
class StageEffects {
public:
  StageEffects(const Scenario &scenario, const MemoryTrack &track, int stage, bool split) {
    const auto probe = [&](bool x, int backward) {
      Schedule schedule;
      schedule.device_ops.resize(1);
      auto &ops = schedule.device_ops[0];
      const auto push = [&](OpKind kind) { ops.push_back(Op::make(kind, stage, 0)); };
      push(OpKind::forward);
      if (x)
        push(OpKind::recompute_forward);
      if (split) {
        push(OpKind::backward_input);
        if (backward == 1)
          push(OpKind::recompute_weight_inputs);
        if (backward == 2)
          push(OpKind::recompute_full_backward);
        push(OpKind::backward_weight);
      } else {
        push(OpKind::backward_full);
      }
      const OpLocator locator(schedule, scenario.stage_count(), 1);
      const std::vector<MemoryEffect> effects = memory_effects(schedule, locator, track);
      std::array<MemoryEffect, kOpKindCount> by_kind{};
      for (std::size_t i = 0; i < ops.size(); ++i) {
        by_kind[static_cast<std::size_t>(ops[i].kind())] = effects[i];
      }
      return by_kind;
    };
    const auto base = probe(false, 0);
    std::array<std::array<MemoryEffect, kOpKindCount>, kChoiceCount> with{};
    with[kX] = probe(true, 0);
    if (split) {
      with[kY] = probe(false, 1);
      with[kZ] = probe(false, 2);
    } else {
      with[kY] = base;
      with[kZ] = base;
    }
    for (int k = 0; k < kOpKindCount; ++k) {
      AffineEffect &e = effects_[static_cast<std::size_t>(k)];
      const MemoryEffect &b = base[static_cast<std::size_t>(k)];
      e.alloc.constant = b.alloc;
      e.release.constant = b.release;
      e.transient.constant = b.transient;
      for (int c = 0; c < kChoiceCount; ++c) {
        const MemoryEffect &w = with[static_cast<std::size_t>(c)][static_cast<std::size_t>(k)];
        e.alloc.coefficient[static_cast<std::size_t>(c)] = w.alloc - b.alloc;
        e.release.coefficient[static_cast<std::size_t>(c)] = w.release - b.release;
        e.transient.coefficient[static_cast<std::size_t>(c)] = w.transient - b.transient;
      }
    }
  }

  /// The reference's lumped accounting (remat.md 2): recomputation has no memory of its own,
  /// it is in the transient of the B or W it precedes. An op's increment D becomes a negative
  /// release, its transient P is checked on top of what is resident before it.
  static StageEffects reference(const StageMemory &m) {
    StageEffects effects;
    const double ck = m.checkpoint;
    const auto set = [&](OpKind kind, Affine increment, Affine transient) {
      AffineEffect &e = effects.effects_[static_cast<std::size_t>(kind)];
      e.release.constant = -increment.constant;
      for (std::size_t c = 0; c < kChoiceCount; ++c) e.release.coefficient[c] = -increment.coefficient[c];
      e.transient = transient;
    };
    // K^f = M_f - (M_f - ck) x; K^b = M_b - M_ba y - (M_b - ck) z; K^w = M_w.
    set(OpKind::forward, {m.stored, {-(m.stored - ck), 0, 0}},
        {m.peak_forward, {m.peak_checkpointed_forward - m.peak_forward, 0, 0}});
    set(OpKind::backward_input,
        {m.kept_after_b - m.stored, {m.stored - ck, -m.weight_input_share, -(m.kept_after_b - ck)}},
        {m.peak_backward_input,
         {std::max(m.peak_forward, m.stored + m.peak_backward_input) - m.peak_backward_input, 0, 0}});
    set(OpKind::backward_weight,
        {m.kept_after_w - m.kept_after_b, {0, m.weight_input_share, m.kept_after_b - ck}},
        {m.peak_backward_weight,
         {0, m.peak_checkpointed_forward - m.peak_backward_weight,
          std::max({m.peak_forward, m.stored + m.peak_backward_input,
                    m.kept_after_b + m.peak_backward_weight}) -
              m.peak_backward_weight}});
    return effects;
  }

  [[nodiscard]] const AffineEffect &of(OpKind kind) const {
    return effects_[static_cast<std::size_t>(kind)];
  }

private:
  StageEffects() = default;
  std::array<AffineEffect, kOpKindCount> effects_{};
};

std::string lowercase_token(OpKind kind) {
  std::string token(op_kind_token(kind));
  for (char &c : token)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return token;
}

// The base order with a zero-or-more-length slot for every option: R right before each B/BW,
// RW and RBW right before each W (remat.md 3(b)).
Schedule with_all_slots(const Schedule &base) {
  Schedule expanded;
  expanded.name = base.name;
  expanded.device_ops.resize(base.device_ops.size());
  for (std::size_t g = 0; g < base.device_ops.size(); ++g) {
    for (const Op &op : base.device_ops[g]) {
      const OpRef &ref = op.first;
      if (op.kind() == OpKind::overlapped) {
        throw Error(fmt::format("the remat ILP does not support overlapped F&B ops (schedule '{}')",
                                base.name));
      }
      if (is_recompute(ref.kind)) {
        throw Error(fmt::format("schedule '{}' already contains {}; remat applies to a base "
                                "schedule without recomputation",
                                base.name, describe(ref)));
      }
      auto &ops = expanded.device_ops[g];
      if (ref.kind == OpKind::backward_input || ref.kind == OpKind::backward_full) {
        ops.push_back(Op::make(OpKind::recompute_forward, ref.stage, ref.microbatch));
      }
      if (ref.kind == OpKind::backward_weight) {
        ops.push_back(Op::make(OpKind::recompute_weight_inputs, ref.stage, ref.microbatch));
        ops.push_back(Op::make(OpKind::recompute_full_backward, ref.stage, ref.microbatch));
      }
      ops.push_back(op);
    }
  }
  return expanded;
}

class ModelBuilder {
public:
  ModelBuilder(const Scenario &scenario, const Schedule &base, IlpForm form)
      : scenario_(scenario), base_(base), track_(budget_track(scenario)),
        m_(scenario.microbatches), form_(form) {}

  StageRematModel build() {
    if (scenario_.link.contention || scenario_.link.blocking) {
      throw Error("the remat ILP assumes independent links: turn off link contention and "
                  "blocking sends");
    }
    validate_schedule(scenario_, base_);
    expanded_ = with_all_slots(base_);
    const OpLocator locator(expanded_, scenario_.stage_count(), m_);
    add_option_variables(locator);
    add_time_variables();
    const DependencyGraph graph = build_dependencies(scenario_, expanded_, locator);
    add_time_constraints(locator, graph);
    add_memory_constraints();
    return std::move(result_);
  }

private:
  [[nodiscard]] std::size_t pair(const OpRef &ref) const {
    return static_cast<std::size_t>(ref.stage * m_ + ref.microbatch);
  }

  // The option variable that scales `kind`'s duration (slots) or -1.
  [[nodiscard]] int slot_variable(const OpRef &ref) const {
    switch (ref.kind) {
    case OpKind::recompute_forward:
      return result_.forward_variable[pair(ref)];
    case OpKind::recompute_weight_inputs:
      return result_.weight_input_variable[pair(ref)];
    case OpKind::recompute_full_backward:
      return result_.full_backward_variable[pair(ref)];
    default:
      return -1;
    }
  }

  void add_option_variables(const OpLocator &locator) {
    const std::size_t pairs = static_cast<std::size_t>(scenario_.stage_count() * m_);
    result_.forward_variable.assign(pairs, -1);
    result_.weight_input_variable.assign(pairs, -1);
    result_.full_backward_variable.assign(pairs, -1);
    split_stage_.assign(static_cast<std::size_t>(scenario_.stage_count()), false);
    solver::Model &model = result_.model;
    for (int s = 0; s < scenario_.stage_count(); ++s) {
      for (int j = 0; j < m_; ++j) {
        const std::size_t index = static_cast<std::size_t>(s * m_ + j);
        result_.forward_variable[index] = model.add_binary(fmt::format("x_{}_{}", s, j));
        if (!locator.contains(OpKind::backward_weight, s, j))
          continue;
        split_stage_[static_cast<std::size_t>(s)] = true;
        const int y = model.add_binary(fmt::format("y_{}_{}", s, j));
        const int z = model.add_binary(fmt::format("z_{}_{}", s, j));
        result_.weight_input_variable[index] = y;
        result_.full_backward_variable[index] = z;
        // One backward option at most (remat.md 2, constraint 5).
        model.add_constraint(fmt::format("one_bwd_{}_{}", s, j), {{y, 1}, {z, 1}},
                             Sense::less_equal, 1);
      }
    }
  }

  void add_time_variables() {
    for (const auto &ops : expanded_.device_ops) {
      for (const Op &op : ops) {
        const OpRef &ref = op.first;
        end_variable_.push_back(result_.model.add_variable(
            fmt::format("E_{}_{}_{}", ref.stage, ref.microbatch, lowercase_token(ref.kind)), 0,
            solver::infinity, solver::VariableKind::continuous));
      }
    }
  }

  // duration(entry) as constant + coefficient * variable.
  struct Duration {
    double constant = 0;
    int variable = -1;
    double coefficient = 0;
  };

  [[nodiscard]] Duration duration(const Op &op) const {
    const double ticks = static_cast<double>(op_duration(scenario_, op).count());
    const int variable = slot_variable(op.first);
    if (variable >= 0)
      return {0, variable, ticks};
    return {ticks, -1, 0};
  }

  // E(after) - E(before) - d(after) >= gap, or == gap when `pin`.
  void add_precedence(const std::string &name, int after, int before, const Duration &d, double gap,
                      bool pin = false) {
    std::vector<Term> terms{{end_variable_[static_cast<std::size_t>(after)], 1}};
    if (before >= 0)
      terms.push_back({end_variable_[static_cast<std::size_t>(before)], -1});
    if (d.variable >= 0)
      terms.push_back({d.variable, -d.coefficient});
    result_.model.add_constraint(name, std::move(terms), pin ? Sense::equal : Sense::greater_equal,
                                 gap + d.constant);
  }

  void add_time_constraints(const OpLocator &locator, const DependencyGraph &graph) {
    std::vector<Op> entries;
    for (const auto &ops : expanded_.device_ops)
      entries.insert(entries.end(), ops.begin(), ops.end());
    // Sequential execution on each device (remat.md 2, constraint 3).
    for (int g = 0; g < expanded_.device_count(); ++g) {
      const int first = locator.entry_offset(g);
      const int last = locator.entry_offset(g + 1);
      for (int e = first; e < last; ++e) {
        add_precedence(fmt::format("seq_{}", e), e, e == first ? -1 : e - 1,
                       duration(entries[static_cast<std::size_t>(e)]), 0);
      }
    }
    // Cross-op dependencies of the engine, with their transfer times (constraint 2; the lumped
    // timing edge of R comes with the graph, remat.md 3(b)).
    std::vector<std::vector<const Dependency *>> incoming(entries.size());
    for (std::size_t index = 0; index < graph.edges.size(); ++index) {
      const Dependency &edge = graph.edges[index];
      incoming[static_cast<std::size_t>(edge.consumer)].push_back(&edge);
      add_precedence(fmt::format("dep_{}", index), edge.consumer, edge.producer,
                     duration(entries[static_cast<std::size_t>(edge.consumer)]),
                     static_cast<double>(edge.transfer.count()));
    }
    if (form_ == IlpForm::ppsim) {
      pin_first_ops(locator, entries, incoming);
    } else {
      result_.first_ops_pinned = false; // the reference measures spans from unpinned first ops
    }
    // Tmax >= span of every rank (constraint 6), with the work lower bound on Tmax.
    double work = 0;
    for (int g = 0; g < base_.device_count(); ++g) {
      double busy = 0;
      for (const Op &op : base_.device_ops[static_cast<std::size_t>(g)]) {
        busy += static_cast<double>(op_duration(scenario_, op).count());
      }
      work = std::max(work, busy);
    }
    result_.span_variable = result_.model.add_variable("Tmax", work, solver::infinity,
                                                       solver::VariableKind::continuous, 1.0);
    for (int g = 0; g < expanded_.device_count(); ++g) {
      const int first = locator.entry_offset(g);
      const int last = locator.entry_offset(g + 1) - 1;
      if (last < first)
        continue;
      const Duration d = duration(entries[static_cast<std::size_t>(first)]);
      result_.model.add_constraint(fmt::format("span_{}", g),
                                   {{result_.span_variable, 1},
                                    {end_variable_[static_cast<std::size_t>(last)], -1},
                                    {end_variable_[static_cast<std::size_t>(first)], 1}},
                                   Sense::greater_equal, d.constant);
    }
  }

  // remat.md 3(a): a rank's first op is pinned to its ASAP end when it has no dependency or
  // one dependency on another rank's pinned first op; pins propagate rank to rank.
  void pin_first_ops(const OpLocator &locator, const std::vector<Op> &entries,
                     const std::vector<std::vector<const Dependency *>> &incoming) {
    const int devices = expanded_.device_count();
    std::vector<bool> pinned(static_cast<std::size_t>(devices), false);
    std::vector<bool> first_entry(entries.size(), false);
    for (int g = 0; g < devices; ++g) {
      if (locator.entry_offset(g) < locator.entry_offset(g + 1)) {
        first_entry[static_cast<std::size_t>(locator.entry_offset(g))] = true;
      } else {
        pinned[static_cast<std::size_t>(g)] = true; // an idle device has no span to pin
      }
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (int g = 0; g < devices; ++g) {
        if (pinned[static_cast<std::size_t>(g)])
          continue;
        const int first = locator.entry_offset(g);
        const auto &deps = incoming[static_cast<std::size_t>(first)];
        const Duration d = duration(entries[static_cast<std::size_t>(first)]);
        if (deps.empty()) {
          add_precedence(fmt::format("pin_{}", g), first, -1, d, 0, true);
        } else if (deps.size() == 1 && first_entry[static_cast<std::size_t>(deps[0]->producer)] &&
                   pinned[static_cast<std::size_t>(locator.device_of(deps[0]->producer))]) {
          add_precedence(fmt::format("pin_{}", g), first, deps[0]->producer, d,
                         static_cast<double>(deps[0]->transfer.count()), true);
        } else {
          continue;
        }
        pinned[static_cast<std::size_t>(g)] = true;
        changed = true;
      }
    }
    result_.first_ops_pinned = std::all_of(pinned.begin(), pinned.end(), [](bool p) { return p; });
  }

  // Memory at every position of every rank (remat.md 2 constraint 4, ppsim accounting 3(c)):
  // resident before + alloc + transient <= cap, scaled by the cap for numerical balance.
  void add_memory_constraints() {
    const double cap = *track_.cap;
    std::vector<StageEffects> stage_effects;
    for (int s = 0; s < scenario_.stage_count(); ++s) {
      if (form_ == IlpForm::elf) {
        stage_effects.push_back(StageEffects::reference(track_.stages[static_cast<std::size_t>(s)]));
      } else {
        stage_effects.emplace_back(scenario_, track_, s, split_stage_[static_cast<std::size_t>(s)]);
      }
    }
    std::vector<double> resident(result_.model.variables.size(), 0.0);
    std::vector<char> is_touched(result_.model.variables.size(), 0);
    std::vector<int> touched;
    const auto option_variable = [&](const OpRef &ref, int choice) {
      if (choice == kX)
        return result_.forward_variable[pair(ref)];
      if (choice == kY)
        return result_.weight_input_variable[pair(ref)];
      return result_.full_backward_variable[pair(ref)];
    };
    for (int g = 0; g < expanded_.device_count(); ++g) {
      for (const int v : touched) {
        resident[static_cast<std::size_t>(v)] = 0;
        is_touched[static_cast<std::size_t>(v)] = 0;
      }
      touched.clear();
      double resident_constant = track_.device_constant.empty()
                                     ? 0.0
                                     : track_.device_constant[static_cast<std::size_t>(g)];
      const auto &ops = expanded_.device_ops[static_cast<std::size_t>(g)];
      for (std::size_t i = 0; i < ops.size(); ++i) {
        const OpRef &ref = ops[i].first;
        const AffineEffect &effect =
            stage_effects[static_cast<std::size_t>(ref.stage)].of(ref.kind);
        // The position's own alloc + transient; a slot exists only when its option is on.
        Affine during;
        during.constant = effect.alloc.constant + effect.transient.constant;
        bool varies = false;
        for (int c = 0; c < kChoiceCount; ++c) {
          const auto k = static_cast<std::size_t>(c);
          during.coefficient[k] = effect.alloc.coefficient[k] + effect.transient.coefficient[k];
          varies = varies || during.coefficient[k] != 0;
        }
        // The reference checks every position; the engine's accounting only where an op adds.
        if (varies || during.constant > 0 || form_ == IlpForm::elf) {
          std::vector<Term> terms;
          for (const int v : touched) {
            if (resident[static_cast<std::size_t>(v)] != 0) {
              terms.push_back({v, resident[static_cast<std::size_t>(v)] / cap});
            }
          }
          for (int c = 0; c < kChoiceCount; ++c) {
            const double coefficient = during.coefficient[static_cast<std::size_t>(c)];
            if (coefficient != 0)
              terms.push_back({option_variable(ref, c), coefficient / cap});
          }
          result_.model.add_constraint(fmt::format("mem_{}_{}", g, i), std::move(terms),
                                       Sense::less_equal,
                                       (cap - resident_constant - during.constant) / cap);
        }
        resident_constant += effect.alloc.constant - effect.release.constant;
        for (int c = 0; c < kChoiceCount; ++c) {
          const auto k = static_cast<std::size_t>(c);
          const double delta = effect.alloc.coefficient[k] - effect.release.coefficient[k];
          if (delta == 0)
            continue;
          const int v = option_variable(ref, c);
          PPSIM_ASSERT(v >= 0);
          if (!is_touched[static_cast<std::size_t>(v)]) {
            is_touched[static_cast<std::size_t>(v)] = 1;
            touched.push_back(v);
          }
          resident[static_cast<std::size_t>(v)] += delta;
        }
      }
    }
  }

  const Scenario &scenario_;
  const Schedule &base_;
  const MemoryTrack &track_;
  int m_;
  IlpForm form_;
  Schedule expanded_;
  std::vector<bool> split_stage_;
  std::vector<int> end_variable_;
  StageRematModel result_;
};

RematPlan all_options_plan(const Scenario &scenario, const Schedule &base, BackwardRemat backward) {
  RematPlan plan = empty_plan(scenario);
  const OpLocator locator(base, scenario.stage_count(), scenario.microbatches);
  for (int s = 0; s < scenario.stage_count(); ++s) {
    for (int j = 0; j < scenario.microbatches; ++j) {
      plan.at(s, j).forward = ForwardRemat::full;
      if (locator.contains(OpKind::backward_weight, s, j))
        plan.at(s, j).backward = backward;
    }
  }
  return plan;
}

} // namespace

RematPlan StageRematModel::plan_from(const std::vector<double> &values, int stages,
                                     int microbatches) const {
  RematPlan plan(stages, microbatches);
  const auto on = [&](int variable) {
    return variable >= 0 && values[static_cast<std::size_t>(variable)] > 0.5;
  };
  for (int s = 0; s < stages; ++s) {
    for (int j = 0; j < microbatches; ++j) {
      const auto index = static_cast<std::size_t>(s * microbatches + j);
      RematDecision &d = plan.at(s, j);
      if (on(forward_variable[index]))
        d.forward = ForwardRemat::full;
      if (on(weight_input_variable[index]))
        d.backward = BackwardRemat::activations;
      if (on(full_backward_variable[index]))
        d.backward = BackwardRemat::full;
    }
  }
  return plan;
}

StageRematModel build_stage_remat_model(const Scenario &scenario, const Schedule &base,
                                        IlpForm form) {
  return ModelBuilder(scenario, base, form).build();
}

FormInstance form_instance(const Scenario &scenario, const Schedule &base, IlpForm form) {
  FormInstance instance{scenario, base};
  if (form == IlpForm::ppsim)
    return instance;
  instance.scenario.remat_timing = RematTiming::lumped;
  for (auto &ops : instance.base.device_ops) {
    std::vector<Op> split;
    for (const Op &op : ops) {
      if (op.kind() != OpKind::backward_full) {
        split.push_back(op);
        continue;
      }
      split.push_back(Op::make(OpKind::backward_input, op.first.stage, op.first.microbatch));
      split.push_back(Op::make(OpKind::backward_weight, op.first.stage, op.first.microbatch));
    }
    ops = std::move(split);
  }
  return instance;
}

double minimum_remat_peak(const Scenario &scenario, const Schedule &base) {
  const MemoryTrack &track = budget_track(scenario);
  const std::vector<double> with_rw = device_peaks(
      scenario, apply_plan(base, all_options_plan(scenario, base, BackwardRemat::activations)),
      track);
  const std::vector<double> with_rbw = device_peaks(
      scenario, apply_plan(base, all_options_plan(scenario, base, BackwardRemat::full)), track);
  double peak = 0;
  for (std::size_t g = 0; g < with_rw.size(); ++g) {
    peak = std::max(peak, std::min(with_rw[g], with_rbw[g]));
  }
  return peak;
}

std::string format_budget(const Scenario &scenario, double amount) {
  if (scenario.memory_model == MemoryModel::bytes)
    return format_bytes(amount);
  return format_readable(amount);
}

RematSolution solve_stage_remat(const Scenario &given_scenario, const Schedule &given_base,
                                const IlpOptions &options) {
  const FormInstance instance = form_instance(given_scenario, given_base, options.form);
  const Scenario &scenario = instance.scenario;
  const Schedule &base = instance.base;
  const MemoryTrack &track = budget_track(scenario);
  const auto infeasible = [&]() {
    return Error(fmt::format("cannot fit schedule '{}' within budget {}; minimum with full remat "
                             "is {}",
                             base.name, format_budget(scenario, *track.cap),
                             format_budget(scenario, minimum_remat_peak(scenario, base))));
  };
  const StageRematModel built = build_stage_remat_model(scenario, base, options.form);
  // The all-options plan is the least memory the ppsim model can reach (its accounting is the
  // engine's): below it, skip the solver. The reference's accounting decides for itself.
  if (options.form == IlpForm::ppsim &&
      minimum_remat_peak(scenario, base) > *track.cap * (1 + 1e-9) + 1e-9)
    throw infeasible();

  const solver::Result solved =
      solver::solve(built.model, {options.time_limit_seconds, options.relative_gap, false});
  if (solved.status == solver::Status::infeasible)
    throw infeasible();
  RematSolution solution;
  solution.status = solved.status;
  solution.seconds = solved.seconds;
  if (!solved.has_solution()) {
    solution.failure = solved.status == solver::Status::failed
                           ? fmt::format("the ILP solver failed: {}", solved.failure)
                           : fmt::format("no plan within the time limit of {} s", options.time_limit_seconds);
    return solution;
  }
  solution.plan = built.plan_from(solved.values, scenario.stage_count(), scenario.microbatches);
  solution.schedule = apply_plan(base, solution.plan);
  solution.simulation = simulate(scenario, solution.schedule);
  solution.objective = solved.objective;
  solution.best_bound = solved.best_bound;
  solution.first_ops_pinned = built.first_ops_pinned;
  return solution;
}

} // namespace ppsim
