// Properties of the engine on seeded random valid orders (several placements, split and full
// backward, latency, contention): every op runs once, dependencies and latencies hold, one op at a
// time per device, ASAP starts, makespan == DAG longest path, peak == max prefix sum.
#include "base/index.h"
#include "sim/critical_path.h"
#include "sim/dependencies.h"
#include "sim/engine.h"
#include "sim/metrics.h"
#include "sim/placement.h"
#include "sim/scenario_builder.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>

using namespace ppsim;

namespace {

struct RandomCase {
  Scenario scenario;
  Schedule schedule;
};

// A random topological order of all ops under docs/model.md, "Dependencies" (plus F before B
// before W on the stage), projected onto devices: always deadlock-free.
Schedule random_order(const Scenario &scenario, bool split, std::mt19937 &random) {
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

RandomCase random_case(std::mt19937 &random, bool contention) {
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
  RandomCase result{build_scenario_on(input, placement, chunks, 1), {}};
  result.schedule = random_order(result.scenario, pick(0, 1) == 1, random);
  return result;
}

void check_properties(const RandomCase &random_case) {
  const Scenario &scenario = random_case.scenario;
  const Schedule &schedule = random_case.schedule;
  const Simulation simulation = simulate(scenario, schedule);
  const Timing &result = simulation.timing;
  const OpLocator locator(schedule, scenario.stage_count(), scenario.microbatches);
  const DependencyGraph graph = build_dependencies(scenario, schedule, locator);

  // Every op ran once, for exactly its duration, one at a time per device.
  std::vector<Ticks> arrival(result.start.size(), Ticks{});
  for (const Dependency &edge : graph.edges) {
    const Ticks arrives = result.end[ppsim::at(edge.producer)] + edge.transfer;
    CHECK(result.start[ppsim::at(edge.consumer)] >= arrives);
    arrival[ppsim::at(edge.consumer)] = std::max(arrival[ppsim::at(edge.consumer)], arrives);
  }
  for (int g = 0; g < schedule.device_count(); ++g) {
    const auto &ops = schedule.device_ops[ppsim::at(g)];
    Ticks free{};
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const auto e = ppsim::at(locator.entry_offset(g)) + i;
      CHECK(result.end[e] - result.start[e] == op_duration(scenario, ops[i]));
      CHECK(result.start[e] >= free);
      // ASAP without contention: the start is exactly the later of device free and last arrival.
      if (!scenario.link.contention)
        CHECK(result.start[e] == std::max(free, arrival[e]));
      free = result.end[e];
    }
  }
  // Makespan equals the longest path of the executed DAG (uncontended links).
  const BubbleExplanation explanation = explain_bubbles(scenario, schedule, result);
  if (!scenario.link.contention) {
    CHECK(explanation.longest_path == simulation.metrics.makespan);
  } else {
    CHECK(explanation.longest_path <= simulation.metrics.makespan);
  }
  // Peak memory equals the maximum prefix sum of the count-model deltas along each device order.
  for (int g = 0; g < schedule.device_count(); ++g) {
    double resident = 0;
    double peak = 0;
    for (const Op &op : schedule.device_ops[ppsim::at(g)]) {
      const StageMemory &stage = scenario.activations.stages[ppsim::at(op.first.stage)];
      if (op.kind() == OpKind::forward)
        resident += stage.stored;
      peak = std::max(peak, resident);
      if (op.kind() == OpKind::backward_full)
        resident -= stage.stored;
      if (op.kind() == OpKind::backward_input)
        resident -= stage.stored - stage.kept_after_b;
      if (op.kind() == OpKind::backward_weight)
        resident -= stage.kept_after_b;
    }
    CHECK(simulation.metrics.devices[ppsim::at(g)].peak_activations == doctest::Approx(peak));
  }
}

} // namespace

TEST_CASE("engine properties on 300 random valid orders") {
  std::mt19937 random(20261122);
  for (int trial = 0; trial < 300; ++trial) {
    CAPTURE(trial);
    check_properties(random_case(random, false));
  }
}

TEST_CASE("engine properties with link contention on 150 random valid orders") {
  std::mt19937 random(7);
  for (int trial = 0; trial < 150; ++trial) {
    CAPTURE(trial);
    check_properties(random_case(random, true));
  }
}

TEST_CASE("engine output is deterministic") {
  std::mt19937 random(99);
  for (int trial = 0; trial < 20; ++trial) {
    const RandomCase c = random_case(random, trial % 2 == 0);
    const Simulation first = simulate(c.scenario, c.schedule);
    const Simulation second = simulate(c.scenario, c.schedule);
    CHECK(first.timing.start == second.timing.start);
    CHECK(first.timing.end == second.timing.end);
  }
}
