#include "remat/baselines.h"

#include "sim/memory.h"
#include "sim/op_locator.h"

#include <algorithm>
#include <limits>

namespace ppsim {
namespace {

// Over-cap memory of one device, summed over its op positions (0 when it fits).
double excess(const Scenario &scenario, const Schedule &schedule, const MemoryTrack &track,
              int device) {
  const OpLocator locator(schedule, scenario.stage_count(), scenario.microbatches);
  const std::vector<MemoryEffect> effects = memory_effects(schedule, locator, track);
  double resident =
      track.device_constant.empty() ? 0.0 : track.device_constant[static_cast<std::size_t>(device)];
  const double cap = *track.cap * (1 + 1e-9) + 1e-9;
  double over = 0;
  const std::size_t count = schedule.device_ops[static_cast<std::size_t>(device)].size();
  for (std::size_t i = 0; i < count; ++i) {
    const MemoryEffect &e = effects[static_cast<std::size_t>(locator.entry_offset(device)) + i];
    over += std::max(0.0, resident + e.alloc + e.transient - cap);
    resident += e.alloc - e.release;
  }
  return over;
}

} // namespace

RematPlan full_forward_plan(const Scenario &scenario) {
  RematPlan plan = empty_plan(scenario);
  for (int s = 0; s < scenario.stage_count(); ++s) {
    if (scenario.stage_device[static_cast<std::size_t>(s)] == scenario.devices - 1)
      continue;
    for (int j = 0; j < scenario.microbatches; ++j)
      plan.at(s, j).forward = ForwardRemat::full;
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
  const auto kept_fraction = [&](int stage) {
    const std::vector<double> &kept = input.bytes.selective_activation;
    const std::vector<double> &full = input.bytes.activation;
    if (kept.empty() || full.empty()) return 1 - options.memory_fraction();
    const auto at = [&](const std::vector<double> &values) {
      return values.size() == 1 ? values.front() : values[static_cast<std::size_t>(stage)];
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

std::optional<RematPlan> greedy_plan(const Scenario &scenario, const Schedule &base) {
  const MemoryTrack &track = budget_track(scenario);
  const OpLocator base_locator(base, scenario.stage_count(), scenario.microbatches);
  RematPlan plan = empty_plan(scenario);
  for (;;) {
    const Schedule current = apply_plan(base, plan);
    int device = -1;
    double over = 0;
    for (int g = 0; g < scenario.devices && device < 0; ++g) {
      over = excess(scenario, current, track, g);
      if (over > 0)
        device = g;
    }
    if (device < 0)
      return plan;
    double best_score = 0;
    std::optional<RematPlan> best;
    for (int s = 0; s < scenario.stage_count(); ++s) {
      if (scenario.stage_device[static_cast<std::size_t>(s)] != device)
        continue;
      const StageCosts &cost = scenario.stage_costs[static_cast<std::size_t>(s)];
      for (int j = 0; j < scenario.microbatches; ++j) {
        const RematDecision now = plan.at(s, j);
        const bool split = base_locator.contains(OpKind::backward_weight, s, j);
        std::vector<std::pair<RematDecision, Ticks>> steps;
        if (now.forward == ForwardRemat::none) {
          steps.push_back({{ForwardRemat::full, now.backward}, cost.recompute_forward});
        }
        if (split && now.backward == BackwardRemat::none) {
          steps.push_back(
              {{now.forward, BackwardRemat::activations}, cost.recompute_weight_inputs});
        }
        if (split && now.backward == BackwardRemat::activations) {
          steps.push_back({{now.forward, BackwardRemat::full},
                           cost.recompute_full_backward - cost.recompute_weight_inputs});
        }
        for (const auto &[next, extra] : steps) {
          RematPlan candidate = plan;
          candidate.at(s, j) = next;
          const double saved = over - excess(scenario, apply_plan(base, candidate), track, device);
          if (saved <= 0)
            continue;
          const double score = extra.count() <= 0 ? std::numeric_limits<double>::infinity()
                                                  : saved / static_cast<double>(extra.count());
          if (!best || score > best_score) {
            best_score = score;
            best = std::move(candidate);
          }
        }
      }
    }
    if (!best)
      return std::nullopt;
    plan = std::move(*best);
  }
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
  replay("full", scenario, full_forward_plan(scenario));
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
