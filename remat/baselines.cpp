#include "remat/baselines.h"
#include "base/index.h"

#include "base/assert.h"
#include "remat/option_model.h"
#include "remat/stage_remat_model.h"
#include "sim/metrics.h"
#include "sim/memory.h"
#include "sim/op_locator.h"

#include <algorithm>
#include <limits>

namespace ppsim {

RematPlan full_forward_plan(const Scenario &scenario, const Schedule &base) {
  RematPlan plan = empty_plan(scenario);
  for (int s = 0; s < scenario.stage_count(); ++s) {
    for (int j = 0; j < scenario.microbatches; ++j)
      plan.at(s, j).forward = ForwardRemat::full;
  }
  // A backward that runs right after its forward finds the activations still there: recomputing
  // them would free nothing in between.
  for (const std::vector<Op> &ops : base.device_ops) {
    for (std::size_t k = 0; k + 1 < ops.size(); ++k) {
      const OpRef &forward = ops[k].first, &next = ops[k + 1].first;
      if (forward.kind == OpKind::forward &&
          (next.kind == OpKind::backward_input || next.kind == OpKind::backward_full) &&
          next.stage == forward.stage && next.microbatch == forward.microbatch)
        plan.at(forward.stage, forward.microbatch).forward = ForwardRemat::none;
    }
  }
  return plan;
}

double SelectiveOptions::memory_fraction() const {
  const double attention = 5.0 * static_cast<double>(attention_heads * sequence_length);
  return attention / (34.0 * static_cast<double>(hidden_size) + attention);
}

Rational SelectiveOptions::time_fraction() const {
  return normalized({sequence_length, 6 * hidden_size + sequence_length});
}

Scenario selective_scenario(const ScenarioInput &input, const Scenario &scenario,
                            const SelectiveOptions &options) {
  ScenarioInput selective = input;
  // A cost file gives each stage's selective R and stash; otherwise the fractions of `options`.
  if (input.recompute_selective.empty()) {
    const std::vector<Rational> &full =
        input.recompute_forward.empty() ? input.forward : input.recompute_forward;
    selective.recompute_forward.clear();
    for (const Rational &r : full)
      selective.recompute_forward.push_back(r * options.time_fraction());
  } else {
    selective.recompute_forward = input.recompute_selective;
  }
  Scenario result =
      build_scenario_on(selective, scenario.stage_device, scenario.chunks, scenario.pipes);
  result.stage_layers = scenario.stage_layers;
  const auto kept_fraction = [&](int stage) {
    const std::vector<double> &kept = input.bytes.selective_activation;
    const std::vector<double> &full = input.bytes.activation;
    if (kept.empty() || full.empty())
      return 1 - options.memory_fraction();
    const auto at = [&](const std::vector<double> &values) {
      return values.size() == 1 ? values.front() : values[ppsim::at(stage)];
    };
    return at(full) > 0 ? at(kept) / at(full) : 1.0;
  };
  const auto keep_all_but_attention = [&](MemoryTrack &track) {
    for (std::size_t s = 0; s < track.stages.size(); ++s) {
      StageMemory &stage = track.stages[s];
      stage.checkpoint = kept_fraction(static_cast<int>(s)) * stage.stored;
      stage.peak_checkpointed_forward = stage.peak_forward;
    }
  };
  keep_all_but_attention(result.activations);
  if (result.bytes)
    keep_all_but_attention(*result.bytes);
  return result;
}

RematPlan selective_plan(const Scenario &scenario) {
  RematPlan plan = empty_plan(scenario);
  for (int s = 0; s < scenario.stage_count(); ++s) {
    for (int j = 0; j < scenario.microbatches; ++j)
      plan.at(s, j).forward = ForwardRemat::full;
  }
  return plan;
}

Scenario with_selective_level(const ScenarioInput &input, const Scenario &scenario) {
  if (!input.measures_selective())
    return scenario;
  const Scenario selective = selective_scenario(input, scenario, {});
  Scenario leveled = scenario;
  for (std::size_t s = 0; s < leveled.stage_costs.size(); ++s) {
    StageCosts &costs = leveled.stage_costs[s];
    // Levels are numbered from 1 and the ILP reads the first checkpoint_levels(): a stage
    // whose tracks hold fewer rotor levels than its costs would shift the selective one.
    const std::size_t rotor_levels = costs.checkpoint_level_recompute.size();
    costs.checkpoint_level_recompute.push_back(scenario.time_scale.to_ticks(
        selective.time_scale.exact_units(selective.stage_costs[s].recompute_forward)));
    const auto add = [&](MemoryTrack &track, const MemoryTrack &from) {
      std::vector<CheckpointLevelMemory> &levels = track.stages[s].checkpoint_levels;
      PPSIM_ASSERT(levels.size() == rotor_levels);
      levels.push_back({from.stages[s].checkpoint, 0, true});
    };
    add(leveled.activations, selective.activations);
    if (leveled.bytes)
      add(*leveled.bytes, *selective.bytes);
  }
  return leveled;
}

std::optional<RematPlan> selective_level_plan(const Scenario &scenario) {
  const std::vector<int> levels = scenario.selective_levels();
  if (std::find(levels.begin(), levels.end(), 0) != levels.end())
    return std::nullopt;
  RematPlan plan = empty_plan(scenario);
  for (int s = 0; s < scenario.stage_count(); ++s) {
    for (int j = 0; j < scenario.microbatches; ++j) {
      plan.at(s, j).forward = ForwardRemat::full;
      plan.at(s, j).level = static_cast<std::uint8_t>(levels[at(s)]);
    }
  }
  return plan;
}

namespace {

// One step of the greedy: an option to turn on for one (s,j), what it saves at the position
// being fixed and the time it adds.
struct GreedyMove {
  int stage = 0, microbatch = 0, choice = 0;
  double saved = 0;
  double score = 0;
  int saving_ends = 0; // the position in its device's order where the saving ends
};

class GreedyPlanner {
public:
  GreedyPlanner(const Scenario &scenario, const Schedule &base)
      : scenario_(scenario), base_(base), track_(capped_track(scenario)),
        m_(scenario.microbatches), expanded_(with_all_slots(base)) {
    const OpLocator locator(base, scenario.stage_count(), m_);
    for (int s = 0; s < scenario.stage_count(); ++s) {
      for (int j = 0; j < m_; ++j)
        split_.push_back(locator.contains(OpKind::backward_weight, s, j));
      effects_.push_back(StageEffects::engine(scenario, track_, s));
      levels_.push_back(checkpoint_levels(scenario, track_, s));
    }
    // An option's saving lasts until its recomputation's slot: R's right before B (or BW), RW's
    // and RBW's right before W.
    saving_ends_.assign(ppsim::at(2 * scenario.stage_count() * m_), 0);
    for (const std::vector<Op> &ops : expanded_.device_ops)
      for (std::size_t i = 0; i < ops.size(); ++i) {
        const OpRef &ref = ops[i].first;
        if (is_recompute(ref.kind))
          saving_ends_[ppsim::at(2 * (ref.stage * m_ + ref.microbatch) +
                                 (ref.kind == OpKind::recompute_forward ? 0 : 1))] =
              static_cast<int>(i);
      }
  }

  // The plan under `ties`, from no recomputation. An option lowers memory from its (s,j)'s F or
  // B on and adds only at its own later slot, so one pass fixes every position; a second catches
  // what rounding may leave.
  std::optional<RematPlan> plan(GreedyTies ties) {
    ties_ = ties;
    plan_ = empty_plan(scenario_);
    for (int round = 0; round < 2; ++round) {
      if (!pass())
        return std::nullopt;
      const std::vector<double> peaks = device_peaks(scenario_, apply_plan(base_, plan_), track_);
      if (std::none_of(peaks.begin(), peaks.end(),
                       [&](double peak) { return over_cap(peak, *track_.cap); }))
        return plan_;
    }
    return std::nullopt;
  }

private:
  // One pass over every device; false when some position cannot be brought under the cap.
  bool pass() {
    DeviceMemoryWalk walk(effects_, m_, scenario_.stage_count() * m_ * kChoiceCount);
    for (int g = 0; g < expanded_.device_count(); ++g) {
      walk.start(track_.device_constant.empty() ? 0.0 : track_.device_constant[ppsim::at(g)]);
      for (const Op &op : expanded_.device_ops[ppsim::at(g)]) {
        const OpRef &ref = op.first;
        for (double memory = memory_at(walk, ref); over_cap(memory, *track_.cap);
             memory = memory_at(walk, ref)) {
          const std::optional<GreedyMove> move = best_move(walk, ref);
          if (!move)
            return false;
          apply(*move);
        }
        walk.advance(ref);
      }
    }
    return true;
  }

  [[nodiscard]] bool on(int stage, int microbatch, int choice) const {
    return takes(plan_.at(stage, microbatch), choice);
  }

  // The choice of (s,j) that excludes `choice` and is on (R and its levels; RW and RBW), or -1.
  [[nodiscard]] int rival_on(int stage, int microbatch, int choice) const {
    const RematDecision &d = plan_.at(stage, microbatch);
    if (is_forward_choice(choice))
      return d.forward == ForwardRemat::full ? choice_of_level(d.level) : -1;
    if (d.backward == BackwardRemat::none)
      return -1;
    return d.backward == BackwardRemat::activations ? kWeightInputChoice : kFullBackwardChoice;
  }

  [[nodiscard]] bool exists(int stage, int microbatch, int choice) const {
    if (is_forward_choice(choice))
      return level_of_choice(choice) <= levels_[ppsim::at(stage)];
    return split_[ppsim::at(stage * m_ + microbatch)];
  }

  // Resident + the op's alloc and transient under the current plan.
  [[nodiscard]] double memory_at(const DeviceMemoryWalk &walk, const OpRef &ref) const {
    const Affine during = walk.during(ref);
    double memory = walk.constant() + during.constant;
    for (const int key : walk.touched()) {
      const int pair = key / kChoiceCount;
      if (on(pair / m_, pair % m_, key % kChoiceCount))
        memory += walk.resident(key);
    }
    for (int c = 0; c < walk.choices(); ++c)
      if (on(ref.stage, ref.microbatch, c))
        memory += during.coefficient[ppsim::at(c)];
    return memory;
  }

  // What switching `choice` of (s,j) on (and its rival off) changes at this position.
  [[nodiscard]] double change(const DeviceMemoryWalk &walk, const OpRef &ref, int stage,
                              int microbatch, int choice) const {
    const Affine during = walk.during(ref);
    const auto weight = [&](int c) {
      double w = walk.resident(option_key(stage, microbatch, m_, c));
      if (ref.stage == stage && ref.microbatch == microbatch)
        w += during.coefficient[ppsim::at(c)];
      return w;
    };
    const int rival = rival_on(stage, microbatch, choice);
    return weight(choice) - (rival >= 0 ? weight(rival) : 0.0);
  }

  [[nodiscard]] Ticks time_of(int stage, int choice) const {
    const StageCosts &cost = scenario_.stage_costs[ppsim::at(stage)];
    if (choice == kWeightInputChoice)
      return cost.recompute_weight_inputs;
    if (choice == kFullBackwardChoice)
      return cost.recompute_full_backward;
    const int level = level_of_choice(choice);
    return level == 0 ? cost.recompute_forward
                      : cost.checkpoint_level_recompute[ppsim::at(level - 1)];
  }

  // The option of an (s,j) alive at this position that saves the most memory here per unit of
  // added time, ties broken by ties_. Replacing a rival option must add time, so no (s,j) can
  // switch back and forth.
  [[nodiscard]] std::optional<GreedyMove> best_move(const DeviceMemoryWalk &walk,
                                                    const OpRef &ref) const {
    std::optional<GreedyMove> best;
    const auto consider = [&](int key) {
      const int pair = key / kChoiceCount, choice = key % kChoiceCount;
      const int stage = pair / m_, microbatch = pair % m_;
      if (on(stage, microbatch, choice) || !exists(stage, microbatch, choice))
        return;
      const int rival = rival_on(stage, microbatch, choice);
      const Ticks extra_ticks =
          time_of(stage, choice) - (rival >= 0 ? time_of(stage, rival) : Ticks{0});
      if (rival >= 0 && extra_ticks <= Ticks{0})
        return;
      const double saved = -change(walk, ref, stage, microbatch, choice);
      if (!(saved > 0))
        return;
      const auto extra = static_cast<double>(extra_ticks.count());
      const double score = extra > 0 ? saved / extra : std::numeric_limits<double>::infinity();
      const int ends = ties_ == GreedyTies::longest_saving ? saving_end(stage, microbatch, choice)
                                                           : 0;
      if (!best || score > best->score ||
          (score == best->score &&
           (ends > best->saving_ends ||
            (ends == best->saving_ends &&
             key > option_key(best->stage, best->microbatch, m_, best->choice)))))
        best = GreedyMove{stage, microbatch, choice, saved, score, ends};
    };
    for (const int key : walk.touched())
      consider(key);
    for (int c = 0; c < walk.choices(); ++c)
      consider(option_key(ref.stage, ref.microbatch, m_, c));
    return best;
  }

  [[nodiscard]] int saving_end(int stage, int microbatch, int choice) const {
    return saving_ends_[ppsim::at(2 * (stage * m_ + microbatch) +
                                  (is_forward_choice(choice) ? 0 : 1))];
  }

  void apply(const GreedyMove &move) {
    RematDecision &d = plan_.at(move.stage, move.microbatch);
    if (is_forward_choice(move.choice)) {
      d.forward = ForwardRemat::full;
      d.level = static_cast<std::uint8_t>(level_of_choice(move.choice));
    } else {
      d.backward =
          move.choice == kWeightInputChoice ? BackwardRemat::activations : BackwardRemat::full;
    }
  }

  const Scenario &scenario_;
  const Schedule &base_;
  const MemoryTrack &track_;
  int m_;
  Schedule expanded_;
  GreedyTies ties_ = GreedyTies::latest_pair;
  std::vector<bool> split_; // per (s,j): backward options exist only for a split backward
  std::vector<int> levels_; // per stage: its checkpoint levels
  std::vector<StageEffects> effects_;
  std::vector<int> saving_ends_; // per (s,j) and forward or backward option: saving_end()
  RematPlan plan_;
};

} // namespace

std::optional<RematPlan> greedy_plan(const Scenario &scenario, const Schedule &base,
                                     GreedyTies ties) {
  return GreedyPlanner(scenario, base).plan(ties);
}

std::vector<RematPlan> greedy_plans(const Scenario &scenario, const Schedule &base) {
  GreedyPlanner planner(scenario, base);
  std::vector<RematPlan> plans;
  for (const GreedyTies ties : {GreedyTies::latest_pair, GreedyTies::longest_saving}) {
    std::optional<RematPlan> plan = planner.plan(ties);
    if (plan && std::find(plans.begin(), plans.end(), *plan) == plans.end())
      plans.push_back(std::move(*plan));
  }
  return plans;
}

std::optional<RematPlan> greedy_plan(const Scenario &scenario, const Schedule &base) {
  std::optional<RematPlan> best;
  std::optional<Ticks> best_objective;
  for (RematPlan &plan : greedy_plans(scenario, base)) {
    const Ticks objective = replayed_objective(simulate(scenario, apply_plan(base, plan)).metrics);
    if (!best_objective || objective < *best_objective) {
      best = std::move(plan);
      best_objective = objective;
    }
  }
  return best;
}

std::vector<RematOutcome> run_baselines(const ScenarioInput &input, const Scenario &scenario,
                                        const Schedule &base, const SelectiveOptions &selective) {
  std::vector<RematOutcome> outcomes;
  const auto replay = [&](const std::string &policy, const Scenario &under, const RematPlan &plan) {
    RematOutcome outcome{policy, true, "", under, plan, {}, {}};
    outcome.schedule = apply_plan(base, plan);
    outcome.simulation = simulate(under, outcome.schedule);
    outcomes.push_back(std::move(outcome));
  };
  replay("none", scenario, empty_plan(scenario));
  replay("full", scenario, full_forward_plan(scenario, base));
  const Scenario selective_run = selective_scenario(input, scenario, selective);
  replay("selective", selective_run, selective_plan(selective_run));
  if (const std::optional<RematPlan> greedy = greedy_plan(scenario, base)) {
    replay("greedy", scenario, *greedy);
  } else {
    outcomes.push_back({"greedy",
                        false,
                        "no single option reduces the excess memory",
                        scenario,
                        empty_plan(scenario),
                        base,
                        {}});
  }
  return outcomes;
}

} // namespace ppsim
