#include "remat/stage_remat_model.h"
#include "base/index.h"

#include "remat/option_model.h"

#include "base/assert.h"
#include "base/error.h"
#include "sim/dependencies.h"
#include "sim/memory.h"
#include "sim/op_locator.h"
#include "sim/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <optional>

namespace ppsim {
namespace {

using solver::Sense;
using solver::Term;

std::string lowercase_token(OpKind kind) {
  std::string token(op_kind_token(kind));
  for (char &c : token)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return token;
}

using Clock = std::chrono::steady_clock;

// The most nonzeros (matrix entries) the model may have: past it the matrix alone would take
// gigabytes and CBC could not solve it within any sensible limit (docs/reliability.md, "Limits").
constexpr std::int64_t kMaxIlpNonzeros = std::int64_t{1} << 25;

// Thrown when the time limit ends while the model is still being built.
struct BuildDeadline {};

class ModelBuilder {
public:
  ModelBuilder(const Scenario &scenario, const Schedule &base, IlpForm form, bool peak_mode,
               std::optional<Clock::time_point> deadline = std::nullopt)
      : scenario_(scenario), base_(base), track_(capped_track(scenario)), m_(scenario.microbatches),
        form_(form), peak_mode_(peak_mode), deadline_(deadline) {}

  StageRematModel build() {
    validate_schedule(scenario_, base_);
    expanded_ = with_all_slots(base_);
    check_size();
    const OpLocator locator(expanded_, scenario_.stage_count(), m_);
    add_option_variables(locator);
    if (peak_mode_) {
      result_.peak_variable = result_.model.add_variable("Peak", 0, solver::infinity,
                                                         solver::VariableKind::continuous, 1.0);
    } else {
      result_.ticks_per_time_unit = time_unit();
      add_time_variables();
      const DependencyGraph graph = build_dependencies(scenario_, expanded_, locator);
      add_time_constraints(locator, graph);
    }
    add_memory_constraints();
    return std::move(result_);
  }

private:
  void check_deadline() const {
    if (deadline_ && Clock::now() >= *deadline_)
      throw BuildDeadline{};
  }

  [[nodiscard]] std::vector<StageEffects> stage_effects() const {
    std::vector<StageEffects> effects;
    for (int s = 0; s < scenario_.stage_count(); ++s) {
      effects.push_back(form_ == IlpForm::elf ? StageEffects::reference(track_.stages[at(s)])
                                              : StageEffects::engine(scenario_, track_, s));
    }
    return effects;
  }

  // Bounds the matrix before building it: a memory row per position holds at most the options
  // resident there plus the op's own, and the time rows a few entries per op. The walk counts
  // without building, in time linear in the ops.
  void check_size() const {
    const std::vector<StageEffects> effects = stage_effects();
    DeviceMemoryWalk walk(effects, m_, scenario_.stage_count() * m_ * kChoiceCount);
    std::int64_t nonzeros = 0;
    for (const auto &device : expanded_.device_ops) {
      walk.start(0);
      for (const Op &op : device) {
        nonzeros += static_cast<std::int64_t>(walk.touched().size()) + walk.choices() + 4;
        walk.advance(op.first);
      }
      if (nonzeros > kMaxIlpNonzeros)
        break; // enough to refuse
    }
    if (nonzeros <= kMaxIlpNonzeros)
      return;
    throw Error(fmt::format("the remat ILP of schedule '{}' is too large: over {} matrix entries "
                            "({} stages, m = {}), the "
                            "limit is 2^25 (docs/reliability.md); use fewer microbatches (-m) or "
                            "devices (-p), or a remat "
                            "policy other than the ILP",
                            base_.name, nonzeros, scenario_.stage_count(), m_));
  }

public:
  /// The size check alone, before anything else is computed (remat.md).
  void check_size_only() {
    validate_schedule(scenario_, base_);
    expanded_ = with_all_slots(base_);
    check_size();
  }

private:
  // Times enter the model in a unit near the typical op duration, a power of two of ticks (so
  // that integer tick counts stay exact): with microsecond ticks of millisecond ops the matrix
  // would otherwise mix coefficients of 1e7 with the memory rows' O(1), which Clp cannot always
  // factorise.
  [[nodiscard]] double time_unit() const {
    double total = 0;
    std::int64_t count = 0;
    for (const auto &ops : base_.device_ops) {
      for (const Op &op : ops) {
        const auto ticks = op_duration(scenario_, op).count();
        if (ticks > 0) {
          total += static_cast<double>(ticks);
          ++count;
        }
      }
    }
    if (count == 0)
      return 1;
    return std::exp2(std::round(std::log2(total / static_cast<double>(count))));
  }

  [[nodiscard]] double in_time_units(Ticks ticks) const {
    return static_cast<double>(ticks.count()) / result_.ticks_per_time_unit;
  }

private:
  [[nodiscard]] std::size_t pair(const OpRef &ref) const {
    return at(ref.stage * m_ + ref.microbatch);
  }

  // The option variables that scale a slot's duration: R's x and levels, RW's y, RBW's z.
  [[nodiscard]] std::vector<std::pair<int, int>> slot_choices(const OpRef &ref) const {
    std::vector<std::pair<int, int>> choices; // (variable, level of R)
    const auto add = [&](int choice, int level) {
      const int variable =
          result_.option_variable[at(option_key(ref.stage, ref.microbatch, m_, choice))];
      if (variable >= 0)
        choices.emplace_back(variable, level);
    };
    switch (ref.kind) {
    case OpKind::recompute_forward:
      for (int c = 0; c < kChoiceCount; ++c)
        if (is_forward_choice(c))
          add(c, level_of_choice(c));
      break;
    case OpKind::recompute_weight_inputs:
      add(kWeightInputChoice, 0);
      break;
    case OpKind::recompute_full_backward:
      add(kFullBackwardChoice, 0);
      break;
    default:
      break;
    }
    return choices;
  }

  void add_option_variables(const OpLocator &locator) {
    result_.option_variable.assign(at(scenario_.stage_count() * m_ * kChoiceCount), -1);
    solver::Model &model = result_.model;
    for (int s = 0; s < scenario_.stage_count(); ++s) {
      const int levels = checkpoint_levels(scenario_, track_, s);
      if (levels > 0 && form_ == IlpForm::elf)
        throw Error("the elf form has no checkpoint levels: solve them in the ppsim form");
      for (int j = 0; j < m_; ++j) {
        const auto variable = [&](int choice) -> int & {
          return result_.option_variable[at(option_key(s, j, m_, choice))];
        };
        variable(kForwardChoice) = model.add_binary(fmt::format("x_{}_{}", s, j));
        if (levels > 0) {
          // R from the checkpoint or at one level, not both (docs/remat.md, "Checkpoint levels").
          std::vector<Term> one_forward{{variable(kForwardChoice), 1}};
          for (int level = 1; level <= levels; ++level) {
            variable(choice_of_level(level)) =
                model.add_binary(fmt::format("c_{}_{}_{}", s, j, level));
            one_forward.push_back({variable(choice_of_level(level)), 1});
          }
          model.add_constraint(fmt::format("one_fwd_{}_{}", s, j), std::move(one_forward),
                               Sense::less_equal, 1);
        }
        if (!locator.contains(OpKind::backward_weight, s, j))
          continue;
        const int y = model.add_binary(fmt::format("y_{}_{}", s, j));
        const int z = model.add_binary(fmt::format("z_{}_{}", s, j));
        variable(kWeightInputChoice) = y;
        variable(kFullBackwardChoice) = z;
        // One backward option at most (docs/remat.md, "The reference formulation", constraint 5).
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

  // duration(entry) as a constant plus, for a slot, one term per option that fills it.
  struct Duration {
    double constant = 0;
    std::vector<Term> terms;
  };

  [[nodiscard]] Duration duration(const Op &op) const {
    const std::vector<std::pair<int, int>> choices = slot_choices(op.first);
    if (choices.empty())
      return {in_time_units(op_duration(scenario_, op)), {}};
    Duration d;
    for (const auto &[variable, level] : choices) {
      Op variant = op;
      variant.first.level = static_cast<std::uint8_t>(level);
      d.terms.push_back({variable, in_time_units(op_duration(scenario_, variant))});
    }
    return d;
  }

  // E(after) - E(before) - d(after) >= gap, or == gap when `pin`.
  void add_precedence(const std::string &name, int after, int before, const Duration &d, double gap,
                      bool pin = false) {
    std::vector<Term> terms{{end_variable_[at(after)], 1}};
    if (before >= 0)
      terms.push_back({end_variable_[at(before)], -1});
    for (const Term &term : d.terms)
      terms.push_back({term.variable, -term.coefficient});
    result_.model.add_constraint(name, std::move(terms), pin ? Sense::equal : Sense::greater_equal,
                                 gap + d.constant);
  }

  void add_time_constraints(const OpLocator &locator, const DependencyGraph &graph) {
    std::vector<Op> entries;
    for (const auto &ops : expanded_.device_ops)
      entries.insert(entries.end(), ops.begin(), ops.end());
    // Sequential execution on each device (docs/remat.md, "The reference formulation", constraint
    // 3).
    for (int g = 0; g < expanded_.device_count(); ++g) {
      const int first = locator.entry_offset(g);
      const int last = locator.entry_offset(g + 1);
      for (int e = first; e < last; ++e) {
        add_precedence(fmt::format("seq_{}", e), e, e == first ? -1 : e - 1,
                       duration(entries[at(e)]), 0);
      }
      check_deadline();
    }
    // Cross-op dependencies of the engine, with their transfer times (constraint 2; the lumped
    // timing edge of R comes with the graph, docs/remat.md, "The ILP (ppsim form)").
    std::vector<std::vector<const Dependency *>> incoming(entries.size());
    for (std::size_t index = 0; index < graph.edges.size(); ++index) {
      const Dependency &edge = graph.edges[index];
      incoming[at(edge.consumer)].push_back(&edge);
      add_precedence(fmt::format("dep_{}", index), edge.consumer, edge.producer,
                     duration(entries[at(edge.consumer)]), in_time_units(edge.transfer));
    }
    if (form_ == IlpForm::ppsim) {
      pin_first_ops(locator, entries, incoming);
    } else {
      result_.first_ops_pinned = false; // the reference measures spans from unpinned first ops
    }
    // Tmax >= span of every rank (constraint 6). With the iteration's end (docs/model.md, "The
    // iteration's end") Tmax >= each rank's end plus what follows it instead, so that Tmax is the
    // iteration: its all-reduce, then its own optimizer step (post-validation) or the slowest one
    // (sync). The work lower bound on Tmax: a rank's busy time (plus what follows its end).
    const std::vector<double> tails = iteration_tails();
    double work = 0;
    for (int g = 0; g < base_.device_count(); ++g) {
      double busy = 0;
      for (const Op &op : base_.device_ops[at(g)]) {
        busy += in_time_units(op_duration(scenario_, op));
      }
      work = std::max(work, busy + (tails.empty() ? 0.0 : tails[at(g)]));
    }
    result_.span_variable = result_.model.add_variable("Tmax", work, solver::infinity,
                                                       solver::VariableKind::continuous, 1.0);
    for (int g = 0; g < expanded_.device_count(); ++g) {
      const int first = locator.entry_offset(g);
      const int last = locator.entry_offset(g + 1) - 1;
      if (last < first)
        continue;
      if (!tails.empty()) {
        result_.model.add_constraint(fmt::format("iteration_{}", g),
                                     {{result_.span_variable, 1}, {end_variable_[at(last)], -1}},
                                     Sense::greater_equal, tails[at(g)]);
        continue;
      }
      const Duration d = duration(entries[at(first)]);
      result_.model.add_constraint(fmt::format("span_{}", g),
                                   {{result_.span_variable, 1},
                                    {end_variable_[at(last)], -1},
                                    {end_variable_[at(first)], 1}},
                                   Sense::greater_equal, d.constant);
    }
  }

  // Per rank, in time units, what follows its last op until the iteration ends
  // (sim/metrics.h); empty without the iteration's end.
  [[nodiscard]] std::vector<double> iteration_tails() const {
    std::vector<double> tails;
    for (const Ticks tail : ppsim::iteration_tails(scenario_))
      tails.push_back(in_time_units(tail));
    return tails;
  }

  // docs/remat.md, "The ILP (ppsim form)": a rank's first op is pinned to its ASAP end when it has
  // no dependency or one dependency on another rank's pinned first op; pins propagate rank to rank.
  void pin_first_ops(const OpLocator &locator, const std::vector<Op> &entries,
                     const std::vector<std::vector<const Dependency *>> &incoming) {
    const int devices = expanded_.device_count();
    std::vector<bool> pinned(at(devices), false);
    std::vector<bool> first_entry(entries.size(), false);
    for (int g = 0; g < devices; ++g) {
      if (locator.entry_offset(g) < locator.entry_offset(g + 1)) {
        first_entry[at(locator.entry_offset(g))] = true;
      } else {
        pinned[at(g)] = true; // an idle device has no span to pin
      }
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (int g = 0; g < devices; ++g) {
        if (pinned[at(g)])
          continue;
        const int first = locator.entry_offset(g);
        const auto &deps = incoming[at(first)];
        const Duration d = duration(entries[at(first)]);
        if (deps.empty()) {
          add_precedence(fmt::format("pin_{}", g), first, -1, d, 0, true);
        } else if (deps.size() == 1 && first_entry[at(deps[0]->producer)] &&
                   pinned[at(locator.device_of(deps[0]->producer))]) {
          add_precedence(fmt::format("pin_{}", g), first, deps[0]->producer, d,
                         in_time_units(deps[0]->transfer), true);
        } else {
          continue;
        }
        pinned[at(g)] = true;
        changed = true;
      }
    }
    result_.first_ops_pinned = std::all_of(pinned.begin(), pinned.end(), [](bool p) { return p; });
  }

  // Memory at every position of every rank (docs/remat.md, "The reference formulation",
  // constraint (4), with the ppsim accounting, point (c) of "The ILP (ppsim form)"): resident
  // before + alloc + transient <= cap, or <= the peak variable when the peak is what is minimised;
  // in units of the cap, for numerical balance.
  void add_memory_constraints() {
    const double cap = *track_.cap;
    const std::vector<StageEffects> effects = stage_effects();
    DeviceMemoryWalk walk(effects, m_, scenario_.stage_count() * m_ * kChoiceCount);
    const auto option_variable = [&](int key) { return result_.option_variable[at(key)]; };
    for (int g = 0; g < expanded_.device_count(); ++g) {
      check_deadline();
      const double constant = track_.device_constant.empty() ? 0.0 : track_.device_constant[at(g)];
      walk.start(constant);
      if (peak_mode_) {
        auto &peak = result_.model.variables[at(result_.peak_variable)];
        peak.lower = std::max(peak.lower, constant / cap);
      }
      const auto &ops = expanded_.device_ops[at(g)];
      for (std::size_t i = 0; i < ops.size(); ++i) {
        const OpRef &ref = ops[i].first;
        // The position's own alloc + transient; a slot exists only when its option is on.
        const Affine during = walk.during(ref);
        // The reference checks every position; the engine's accounting only where an op adds.
        if (during.varies() || during.constant > 0 || form_ == IlpForm::elf) {
          std::vector<Term> terms;
          for (const int key : walk.touched()) {
            if (walk.resident(key) != 0)
              terms.push_back({option_variable(key), walk.resident(key) / cap});
          }
          for (int c = 0; c < walk.choices(); ++c) {
            const double coefficient = during.coefficient[at(c)];
            if (coefficient != 0)
              terms.push_back({option_variable(option_key(ref.stage, ref.microbatch, m_, c)),
                               coefficient / cap});
          }
          const double fixed = (walk.constant() + during.constant) / cap;
          // The cap with the engine's own slack, so that a plan exactly at the cap is not cut
          // off by rounding (CBC's preprocessing then declares such models infeasible).
          const double allowed = cap_with_tolerance(cap) / cap;
          if (peak_mode_) {
            terms.push_back({result_.peak_variable, -1});
            result_.model.add_constraint(fmt::format("mem_{}_{}", g, i), std::move(terms),
                                         Sense::less_equal, -fixed);
          } else {
            result_.model.add_constraint(fmt::format("mem_{}_{}", g, i), std::move(terms),
                                         Sense::less_equal, allowed - fixed);
          }
        }
        walk.advance(ref);
      }
    }
  }

  const Scenario &scenario_;
  const Schedule &base_;
  const MemoryTrack &track_;
  int m_;
  IlpForm form_;
  bool peak_mode_;
  std::optional<Clock::time_point> deadline_;
  Schedule expanded_;
  std::vector<int> end_variable_;
  StageRematModel result_;
};

} // namespace

RematPlan StageRematModel::plan_from(const std::vector<double> &values, int stages,
                                     int microbatches) const {
  RematPlan plan(stages, microbatches);
  const auto on = [&](int variable) { return variable >= 0 && values[at(variable)] > 0.5; };
  for (int s = 0; s < stages; ++s) {
    for (int j = 0; j < microbatches; ++j) {
      RematDecision &d = plan.at(s, j);
      for (int c = 0; c < kChoiceCount; ++c) {
        if (!on(option_variable[at(option_key(s, j, microbatches, c))]))
          continue;
        if (is_forward_choice(c)) {
          d.forward = ForwardRemat::full;
          d.level = static_cast<std::uint8_t>(level_of_choice(c));
        } else {
          d.backward = c == kWeightInputChoice ? BackwardRemat::activations : BackwardRemat::full;
        }
      }
    }
  }
  return plan;
}

StageRematModel build_stage_remat_model(const Scenario &scenario, const Schedule &base,
                                        IlpForm form) {
  return ModelBuilder(scenario, base, form, false).build();
}

StageRematModel build_minimum_peak_model(const Scenario &scenario, const Schedule &base,
                                         IlpForm form) {
  return ModelBuilder(scenario, base, form, true).build();
}

std::optional<StageRematModel>
build_stage_remat_model_until(const Scenario &scenario, const Schedule &base, IlpForm form,
                              bool least_peak, std::chrono::steady_clock::time_point deadline) {
  try {
    return ModelBuilder(scenario, base, form, least_peak, deadline).build();
  } catch (const BuildDeadline &) {
    return std::nullopt;
  }
}

void check_stage_remat_size(const Scenario &scenario, const Schedule &base, IlpForm form) {
  const FormInstance instance = form_instance(scenario, base, form);
  ModelBuilder(instance.scenario, instance.base, form, false).check_size_only();
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

} // namespace ppsim
