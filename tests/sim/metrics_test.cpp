// sim/metrics: simulate() end to end on small cases whose timelines are worked out by hand,
// and mean_wait_before_backward.
#include "sim/metrics.h"

#include "base/error.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <limits>
#include <vector>

using namespace ppsim;
using ppsim::testing::generate;
using ppsim::testing::uniform_input;

namespace {

std::vector<double> values(const Scenario &scenario, const Metrics &metrics,
                           Ticks DeviceMetrics::*member) {
  std::vector<double> result;
  for (const DeviceMetrics &device : metrics.devices)
    result.push_back(scenario.time_scale.to_units(device.*member));
  return result;
}

} // namespace

TEST_CASE("1F1B p=2 m=2 F=B=W=1: per-device start, end, span, busy, idle and the bubble ratios") {
  // Device 0: F0 [0,1] F1 [1,2] BW0 [4,6] BW1 [7,9]; device 1: F0 [1,2] BW0 [2,4] F1 [4,5] BW1
  // [5,7].
  const auto generated = generate("1f1b", uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1}));
  const Simulation simulation = simulate(generated.scenario, generated.schedule);
  const Scenario &scenario = generated.scenario;
  const Metrics &metrics = simulation.metrics;
  CHECK(scenario.time_scale.to_units(metrics.makespan) == 9);
  CHECK(scenario.time_scale.to_units(metrics.max_span) == 9);
  CHECK(scenario.time_scale.to_units(metrics.ideal) == 6);
  CHECK(values(scenario, metrics, &DeviceMetrics::start) == std::vector<double>{0, 1});
  CHECK(values(scenario, metrics, &DeviceMetrics::end) == std::vector<double>{9, 7});
  CHECK(values(scenario, metrics, &DeviceMetrics::span) == std::vector<double>{9, 6});
  CHECK(values(scenario, metrics, &DeviceMetrics::busy) == std::vector<double>{6, 6});
  CHECK(values(scenario, metrics, &DeviceMetrics::idle) == std::vector<double>{3, 0});
  CHECK(values(scenario, metrics, &DeviceMetrics::recompute) == std::vector<double>{0, 0});
  CHECK(metrics.bubble_ratio == doctest::Approx(3.0 / 9));
  CHECK(metrics.span_bubble_ratio == doctest::Approx(3.0 / 9));
  CHECK(metrics.devices[0].peak_activations == 2);
  CHECK(metrics.devices[1].peak_activations == 1);
  CHECK(metrics.max_peak_activations() == 2);
  CHECK_FALSE(metrics.max_peak_bytes().has_value());
  CHECK_FALSE(simulation.bytes.has_value());
  CHECK(metrics.feasible);
  CHECK(metrics.violations.empty());
  // Waits before each backward: device 0 waits 2 before BW0 and 1 before BW1; device 1 never.
  CHECK(mean_wait_before_backward(scenario, generated.schedule, simulation.timing) ==
        std::vector<double>{1.5, 0});
}

TEST_CASE("recomputation counts as busy but not as ideal work") {
  // 1F1B p=2 m=2 with an R (cost F = 1) before each BW of device 0:
  // R0 [2,3] runs in the wait, BW0 [4,6], R1 [6,7], BW1 [7,9]; device 1 is unchanged.
  auto generated = generate("1f1b", uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1}));
  std::vector<Op> &ops = generated.schedule.device_ops[0];
  std::vector<Op> with_recompute;
  for (const Op &op : ops) {
    if (op.kind() == OpKind::backward_full) {
      with_recompute.push_back(
          Op::make(OpKind::recompute_forward, op.first.stage, op.first.microbatch));
    }
    with_recompute.push_back(op);
  }
  ops = with_recompute;
  const Scenario &scenario = generated.scenario;
  const Simulation simulation = simulate(scenario, generated.schedule);
  const Metrics &metrics = simulation.metrics;
  CHECK(scenario.time_scale.to_units(metrics.makespan) == 9);
  CHECK(values(scenario, metrics, &DeviceMetrics::busy) == std::vector<double>{8, 6});
  CHECK(values(scenario, metrics, &DeviceMetrics::recompute) == std::vector<double>{2, 0});
  CHECK(values(scenario, metrics, &DeviceMetrics::idle) == std::vector<double>{1, 0});
  CHECK(scenario.time_scale.to_units(metrics.ideal) == 6);
  CHECK(metrics.bubble_ratio == doctest::Approx(3.0 / 9));
  // The R now precedes each BW: the wait is measured from the R's end (1 before BW0, 0 before BW1).
  CHECK(mean_wait_before_backward(scenario, generated.schedule, simulation.timing) ==
        std::vector<double>{0.5, 0});
}

TEST_CASE(
    "a count cap the schedule exceeds makes the run infeasible, with one violation per device") {
  ScenarioInput input = uniform_input(3, 4, {1, 1}, {1, 1}, {1, 1});
  input.cap_activations = 2;
  const auto generated = generate("1f1b", input);
  const Metrics metrics = simulate(generated.scenario, generated.schedule).metrics;
  // 1F1B peaks are min(p - r, m) = 3, 2, 1: only device 0 goes over K = 2.
  CHECK(metrics.max_peak_activations() == 3);
  CHECK_FALSE(metrics.feasible);
  REQUIRE(metrics.violations.size() == 1);
  CHECK(metrics.violations[0].device == 0);
  CHECK(metrics.violations[0].cap == 2);
  CHECK(metrics.violations[0].resident == 3);
}

TEST_CASE("the byte model's budget decides feasibility when memory_model is bytes") {
  ScenarioInput input = uniform_input(2, 4, {1, 1}, {1, 1}, {1, 1});
  testing::set_accounting_bytes(input, 1e12);
  const auto roomy = generate("1f1b", input);
  const Simulation fits = simulate(roomy.scenario, roomy.schedule);
  REQUIRE(fits.metrics.max_peak_bytes().has_value());
  CHECK(fits.metrics.feasible);
  double largest = 0;
  for (const DeviceMetrics &device : fits.metrics.devices) {
    REQUIRE(device.peak_bytes.has_value());
    largest = std::max(largest, *device.peak_bytes);
  }
  CHECK(*fits.metrics.max_peak_bytes() == largest);
  // Device 0 holds two activations of 1000 bytes at its peak, device 1 one: a budget between
  // the two peaks fails device 0 only.
  CHECK(*fits.metrics.devices[0].peak_bytes > *fits.metrics.devices[1].peak_bytes);
  const double budget =
      (*fits.metrics.devices[0].peak_bytes + *fits.metrics.devices[1].peak_bytes) / 2;
  testing::set_accounting_bytes(input, budget);
  const auto tight = generate("1f1b", input);
  const Metrics metrics = simulate(tight.scenario, tight.schedule).metrics;
  CHECK_FALSE(metrics.feasible);
  REQUIRE(metrics.violations.size() == 1);
  CHECK(metrics.violations[0].device == 0);
  CHECK(metrics.violations[0].cap == budget);
}

TEST_CASE("simulate validates the schedule first") {
  auto generated = generate("1f1b", uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1}));
  generated.schedule.device_ops[1].pop_back(); // drop BW(1,1)
  CHECK_THROWS_AS(simulate(generated.scenario, generated.schedule), ppsim::Error);
}

TEST_CASE("issue_29 the iteration's end: all-reduce and optimizer step, sync or post-validation") {
  // 1F1B p = 2, m = 2, F = B = W = 1: device 0 ends at 9, device 1 at 7. d = 3 replicas, link
  // latency 0.5 ms and 1 MB/s, gradients 3000 and 6000 bytes: the ring all-reduce takes
  // 2 (d - 1) 0.5 + 2 (d - 1) / d G / 1e6 s = 2 + 4 = 6 ms on device 0, 2 + 8 = 10 on device 1;
  // optimizer steps 5 and 1 ms.
  ScenarioInput input = uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1});
  input.data_parallel = 3;
  input.data_parallel_latency = {1, 2};
  input.data_parallel_bandwidth_bytes_per_second = 1e6;
  input.bytes.parameters = {3000, 6000};
  input.optimizer_step = {{5, 1}, {1, 1}};
  const auto iteration = [&](IterationEnd end) {
    input.iteration_end = end;
    const testing::Generated generated = generate("1f1b", input);
    const Scenario &scenario = generated.scenario;
    CHECK(scenario.iteration_end.all_reduce ==
          std::vector<Ticks>{scenario.time_scale.to_ticks({6, 1}),
                             scenario.time_scale.to_ticks({10, 1})});
    const Metrics metrics = simulate(scenario, generated.schedule).metrics;
    REQUIRE(metrics.iteration.has_value());
    CHECK(metrics.makespan == scenario.time_scale.to_ticks({9, 1}));
    // A makespan bound of 9 gives 9 + 6 + 5 (sync) and 9 + min(6 + 5, 10 + 1) (post-validation).
    CHECK(scenario.time_scale.to_units(
              *iteration_lower_bound(scenario, scenario.time_scale.to_ticks({9, 1}))) == 20);
    CHECK(throughput(scenario, *metrics.iteration) ==
          doctest::Approx(3 * 2 / (scenario.time_scale.to_units(*metrics.iteration) / 1e3)));
    return scenario.time_scale.to_units(*metrics.iteration);
  };
  // sync: max(9 + 6, 7 + 10) + max(5, 1); post-validation: max(9 + 6 + 5, 7 + 10 + 1).
  CHECK(iteration(IterationEnd::sync) == 22);
  CHECK(iteration(IterationEnd::post_validation) == 20);

  input.iteration_end = IterationEnd::none;
  input.optimizer_step.clear();
  input.bytes.parameters.clear();
  input.data_parallel = 1;
  input.data_parallel_latency = {0, 1};
  input.data_parallel_bandwidth_bytes_per_second = std::numeric_limits<double>::infinity();
  const testing::Generated plain = generate("1f1b", input);
  CHECK_FALSE(simulate(plain.scenario, plain.schedule).metrics.iteration.has_value());
  CHECK_FALSE(iteration_lower_bound(plain.scenario, Ticks{9}).has_value());
  // The end's fields without the end would be ignored: refused, naming the field.
  input.optimizer_step = {{1, 1}};
  CHECK_THROWS_WITH(generate("1f1b", input),
                    "field 'iteration.optimizer': has no effect without the iteration's end: set "
                    "iteration.end to \"sync\" or \"post-validation\"");
  input.optimizer_step = {{1, 1}, {1, 1}, {1, 1}};
  input.iteration_end = IterationEnd::sync;
  CHECK_THROWS_WITH(generate("1f1b", input),
                    "field 'iteration.optimizer': expected 1 or 2 values (one per device), got 3");
  input.optimizer_step.clear();
  input.data_parallel_latency = {1, 1};
  CHECK_THROWS_WITH(generate("1f1b", input),
                    "field 'cluster.data_parallel_link.latency': has no effect with one "
                    "data-parallel replica: set cluster.data_parallel");
  // A bandwidth with no gradient sizes would make the all-reduce free.
  input.data_parallel = 4;
  input.data_parallel_bandwidth_bytes_per_second = 1e9;
  CHECK_THROWS_WITH(generate("1f1b", input),
                    "field 'cluster.data_parallel_link.bandwidth': the all-reduce's time needs the "
                    "gradients' bytes: give a cost file, model.memory.grad_bytes or "
                    "model.memory.param_bytes");
}
