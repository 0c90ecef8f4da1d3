// Properties of the engine on seeded random valid orders (several placements, split and full
// backward, latency, contention): every op runs once, dependencies and latencies hold, one op at a
// time per device, ASAP starts, makespan == DAG longest path, peak == max prefix sum.
#include "base/index.h"
#include "random_orders.h"
#include "sim/critical_path.h"
#include "sim/dependencies.h"
#include "sim/engine.h"
#include "sim/metrics.h"
#include "sim/placement.h"
#include "sim/scenario_builder.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>

using namespace ppsim;
using ppsim::testing::random_case;
using ppsim::testing::RandomCase;

namespace {

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
