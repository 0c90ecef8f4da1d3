#pragma once
// Seeded random valid orders on random scenarios (several placements, split and full backward,
// per-stage costs, latency, optional contention and blocking sends), shared by the engine's
// property tests and the re-timing tests.
#include "base/error.h"
#include "base/index.h"
#include "sim/placement.h"
#include "sim/scenario_builder.h"
#include "sim/schedules/registry.h"
#include "sim/validate.h"

#include <map>
#include <optional>
#include <random>
#include <vector>

namespace ppsim::testing {

struct RandomCase {
  Scenario scenario;
  Schedule schedule;
};

// A random topological order of all ops under docs/model.md, "Dependencies" (plus F before B
// before W on the stage), projected onto devices: always deadlock-free.
inline Schedule random_order(const Scenario &scenario, bool split, std::mt19937 &random) {
  const int stages = scenario.stage_count();
  const int m = scenario.microbatches;
  std::vector<int> next_stage_done_f(ppsim::at(m), -1); // last stage whose F is placed
  std::vector<int> lowest_b(ppsim::at(m), stages);      // lowest stage whose B is placed
  std::map<std::pair<int, int>, bool> w_pending;
  Schedule schedule;
  schedule.name = "random";
  schedule.device_ops.resize(ppsim::at(scenario.devices));
  std::size_t total = ppsim::at(stages) * m * (split ? 3 : 2);
  while (total > 0) {
    std::vector<Op> ready;
    for (int j = 0; j < m; ++j) {
      const auto jj = ppsim::at(j);
      if (next_stage_done_f[jj] + 1 < stages)
        ready.push_back(Op::make(OpKind::forward, next_stage_done_f[jj] + 1, j));
      if (next_stage_done_f[jj] == stages - 1 && lowest_b[jj] > 0) {
        ready.push_back(
            Op::make(split ? OpKind::backward_input : OpKind::backward_full, lowest_b[jj] - 1, j));
      }
    }
    for (const auto &[key, pending] : w_pending) {
      if (pending)
        ready.push_back(Op::make(OpKind::backward_weight, key.first, key.second));
    }
    const Op op = ready[std::uniform_int_distribution<std::size_t>(0, ready.size() - 1)(random)];
    const auto j = ppsim::at(op.first.microbatch);
    if (op.kind() == OpKind::forward) {
      next_stage_done_f[j] = op.first.stage;
    } else if (op.kind() == OpKind::backward_weight) {
      w_pending[{op.first.stage, op.first.microbatch}] = false;
    } else {
      lowest_b[j] = op.first.stage;
      if (split)
        w_pending[{op.first.stage, op.first.microbatch}] = true;
    }
    schedule.device_ops[ppsim::at(scenario.stage_device[ppsim::at(op.first.stage)])].push_back(op);
    --total;
  }
  return schedule;
}

inline RandomCase random_case(std::mt19937 &random, bool contention, bool blocking = false) {
  const auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(random);
  };
  ScenarioInput input;
  input.devices = pick(1, 5);
  input.microbatches = pick(1, 7);
  const PlacementKind kinds[] = {PlacementKind::single_wave, PlacementKind::round_robin,
                                 PlacementKind::v_shape};
  const PlacementKind kind = kinds[pick(0, 2)];
  const int chunks = kind == PlacementKind::single_wave ? 1
                     : kind == PlacementKind::v_shape   ? 2 * pick(1, 2)
                                                        : pick(1, 3);
  const std::vector<int> placement = make_placement(kind, input.devices, chunks);
  const auto costs = [&]() {
    std::vector<Rational> values;
    for (std::size_t s = 0; s < placement.size(); ++s)
      values.push_back({pick(0, 6), pick(1, 3)});
    return values;
  };
  input.forward = costs();
  input.backward_input = costs();
  input.backward_weight = costs();
  input.latency = {pick(0, 2), 2};
  input.w_stash = pick(0, 1) ? 1.0 : 0.5;
  input.contention = contention;
  input.blocking = blocking;
  RandomCase result{build_scenario_on(input, placement, chunks, 1), {}};
  result.schedule = random_order(result.scenario, pick(0, 1) == 1, random);
  return result;
}

// A registered schedule on a random scenario of 2-4 devices: non-uniform per-stage costs,
// latency, bandwidth on odd trials, random contention and blocking sends, lumped recomputation
// timing when asked. Nothing when the schedule refuses the scenario or its search finds
// nothing under the cap; the schedule returned is validated.
inline std::optional<RandomCase> random_registry_case(const ScheduleInfo &info, int trial,
                                                      std::mt19937 &random, bool lumped = false) {
  const auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(random);
  };
  ScenarioInput input;
  input.devices = pick(2, 4);
  input.microbatches = 2 * (input.devices + pick(0, 2)); // DualPipe: even, >= 2p
  input.costs_per_device = false;
  const int stages = input.devices * info.chunks(0) * info.pipes();
  input.forward.clear();
  input.backward_input.clear();
  input.backward_weight.clear();
  for (int s = 0; s < stages; ++s) {
    input.forward.push_back({pick(1, 9), pick(1, 3)});
    input.backward_input.push_back({pick(1, 9), pick(1, 3)});
    input.backward_weight.push_back({pick(0, 9), pick(1, 3)});
    input.bytes.output.push_back(1e6 * pick(0, 4));
  }
  input.overlap_fb = Rational{30, 1};
  input.latency = {pick(0, 4), pick(1, 2)};
  if (trial % 2 == 1)
    input.bandwidth_bytes_per_second = 1e9 * pick(1, 2);
  input.contention = pick(0, 1) == 1;
  input.blocking = pick(0, 1) == 1;
  if (lumped)
    input.remat_timing = RematTiming::lumped;
  RandomCase result{build_scenario(input, info), {}};
  if (info.refusal(result.scenario, {}))
    return std::nullopt;
  try {
    result.schedule = generate_schedule(info, result.scenario, {});
  } catch (const Error &) {
    return std::nullopt; // a search that finds nothing under the cap
  }
  validate_schedule(result.scenario, result.schedule);
  return result;
}

} // namespace ppsim::testing
