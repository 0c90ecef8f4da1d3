// compute_bounds (bounds/analyzer.cpp): which bounds are reported for each backward form, the
// best bound, the closed form and the gap.
#include "bounds/analyzer.h"
#include "sim/metrics.h"
#include "tests/sim/test_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>

using ppsim::BackwardForm;
using ppsim::Ticks;
using ppsim::testing::uniform_input;

namespace {

std::vector<std::string> names(const ppsim::BoundsReport &report) {
  std::vector<std::string> result;
  for (const ppsim::NamedBound &bound : report.lower_bounds)
    result.push_back(bound.name);
  return result;
}

} // namespace

TEST_CASE(
    "capped full-backward schedules report LB0, LB1, LB2, LB4 and span_LB; split ones add LB3 and "
    "LB3_mem") {
  ppsim::ScenarioInput input = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  input.cap_activations = 2.0;
  const ppsim::ScheduleInfo &full_backward = ppsim::find_schedule("1f1b");
  const ppsim::ScheduleInfo &split = ppsim::find_schedule("zb-h1");
  CHECK(ppsim::bounds_options_for(full_backward).backward == BackwardForm::full);
  CHECK(ppsim::bounds_options_for(split).backward == BackwardForm::split);
  CHECK(ppsim::bounds_options_for(split, 3).group_size == 3);
  const ppsim::BoundsReport full_report = ppsim::compute_bounds(
      ppsim::build_scenario(input, full_backward), ppsim::bounds_options_for(full_backward));
  CHECK(names(full_report) == std::vector<std::string>{"LB0", "LB1", "LB2", "LB4", "span_LB"});
  const ppsim::BoundsReport split_report =
      ppsim::compute_bounds(ppsim::build_scenario(input, split), ppsim::bounds_options_for(split));
  CHECK(names(split_report) ==
        std::vector<std::string>{"LB0", "LB1", "LB2", "LB3", "LB3_mem", "LB4", "span_LB"});
  CHECK(split_report.lb2_integer_scan);
}

TEST_CASE("the best bound is the largest makespan bound; span_LB is not one of them") {
  // ZB-H2 setting at K = 2: span_LB (memory-time of the whole busy time, no window) can exceed
  // the makespan bounds' device terms but never enters best_lower_bound.
  ppsim::ScenarioInput input = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  input.cap_activations = 1.0;
  const ppsim::Scenario scenario = ppsim::build_scenario(input, ppsim::find_schedule("zb-h2"));
  const ppsim::BoundsReport report = ppsim::compute_bounds(scenario, {BackwardForm::split, "", 0});
  Ticks best{0};
  for (const ppsim::NamedBound &bound : report.lower_bounds) {
    CHECK(bound.bounds_makespan == (bound.name != "span_LB"));
    if (bound.bounds_makespan)
      best = std::max(best, bound.value);
  }
  CHECK(report.best_lower_bound == best);
  CHECK_FALSE(report.closed_form.has_value()); // no schedule name given
  CHECK_FALSE(report.find("LB9").has_value());
}

TEST_CASE("makespan_gap is makespan / best bound - 1") {
  const ppsim::Scenario scenario = ppsim::build_scenario(
      uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}), ppsim::find_schedule("1f1b"));
  const ppsim::BoundsReport report = ppsim::compute_bounds(scenario, {});
  CHECK(report.best_lower_bound == Ticks{33});
  CHECK(ppsim::makespan_gap(Ticks{33}, report) == 0.0);
  CHECK(ppsim::makespan_gap(Ticks{44}, report) == doctest::Approx(1.0 / 3));
  CHECK(ppsim::makespan_gap(Ticks{5}, ppsim::BoundsReport{}) == 0.0);
}

TEST_CASE("under the byte model a count cap K is not in the bounds: its engine does not check it") {
  // Once `--memory-model bytes --K 1` gave a bound above 1F1B's makespan (a negative gap): the
  // bounds took K, which no schedule of the byte model has to respect.
  ppsim::ScenarioInput input = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  ppsim::testing::set_accounting_bytes(input, 1e9);
  const ppsim::Scenario free = ppsim::build_scenario(input, ppsim::find_schedule("1f1b"));
  input.cap_activations = 1.0;
  const ppsim::Scenario capped = ppsim::build_scenario(input, ppsim::find_schedule("1f1b"));
  REQUIRE(capped.activations.cap.has_value());
  const ppsim::BoundsReport with_k = ppsim::compute_bounds(capped, {});
  CHECK(with_k.best_lower_bound == ppsim::compute_bounds(free, {}).best_lower_bound);
  CHECK(with_k.cap_fits_one_activation);
  const ppsim::Schedule schedule =
      ppsim::generate_schedule(ppsim::find_schedule("1f1b"), capped, {});
  CHECK(with_k.best_lower_bound <= ppsim::simulate(capped, schedule).metrics.makespan);
}

TEST_CASE("every registered schedule, capped at its own peak, ends at or after every bound") {
  // Random non-uniform costs, recomputation cheaper than F, latency, runtimes (contention,
  // blocking sends), two-level topologies: the schedule fits a cap equal to its peak, so every
  // makespan bound of that cap must stay below its makespan.
  std::mt19937 random(1127);
  const auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(random);
  };
  int checked = 0;
  for (const ppsim::ScheduleInfo &info : ppsim::schedule_registry()) {
    for (int trial = 0; trial < 4; ++trial) {
      ppsim::ScenarioInput input;
      input.devices = pick(2, 4);
      input.microbatches = 2 * (input.devices + pick(0, 2)); // DualPipe: even, >= 2p
      input.costs_per_device = false;
      const int stages = input.devices * info.chunks(0) * info.pipes();
      input.forward.clear();
      input.backward_input.clear();
      input.backward_weight.clear();
      for (int s = 0; s < stages; ++s) {
        input.forward.push_back({pick(2, 6), 1});
        input.backward_input.push_back({pick(1, 6), 1});
        input.backward_weight.push_back({pick(0, 4), 1});
        input.recompute_forward.push_back(
            {pick(1, 6) % static_cast<int>(input.forward.back().numerator) + 1, 1});
      }
      input.latency = {pick(0, 2), 1};
      // issue_29: a runtime's link preset, or contention as a field; devices on nodes joined by
      // a slower link.
      if (const int runtime = pick(0, 3); runtime == 0)
        input.contention = pick(0, 1) == 1;
      else
        input.runtime = static_cast<ppsim::Runtime>(runtime - 1);
      input.op_overhead = {pick(0, 2), 4}; // the bounds leave it out: still below
      if (pick(0, 1) == 1) {
        input.gpus_per_node = pick(1, input.devices - 1);
        input.inter_node_latency = {pick(1, 8), 2};
      }
      // issue_29: the iteration's end, with per-device optimizer steps and gradients.
      input.iteration_end = trial % 3 == 0   ? ppsim::IterationEnd::none
                            : trial % 3 == 1 ? ppsim::IterationEnd::sync
                                             : ppsim::IterationEnd::post_validation;
      if (input.iteration_end != ppsim::IterationEnd::none) {
        input.data_parallel = pick(1, 4);
        if (input.data_parallel > 1) {
          input.data_parallel_latency = {pick(0, 3), 2};
          input.data_parallel_bandwidth_bytes_per_second = 1e3 * pick(1, 4);
          for (int s = 0; s < stages; ++s)
            input.bytes.parameters.push_back(1e3 * pick(0, 5));
        }
        for (int g = 0; g < input.devices; ++g)
          input.optimizer_step.push_back({pick(0, 5), 1});
      }
      CAPTURE(info.name);
      CAPTURE(trial);
      ppsim::Scenario scenario = ppsim::build_scenario(input, info);
      if (info.refusal(scenario, {}))
        continue;
      ppsim::Schedule schedule;
      try {
        schedule = ppsim::generate_schedule(info, scenario, {});
      } catch (const ppsim::Error &) {
        continue;
      }
      const ppsim::Simulation uncapped = ppsim::simulate(scenario, schedule);
      input.cap_activations = uncapped.metrics.max_peak_activations();
      scenario = ppsim::build_scenario(input, info);
      const ppsim::Simulation capped = ppsim::simulate(scenario, schedule);
      REQUIRE(capped.metrics.feasible);
      const ppsim::BoundsReport report =
          ppsim::compute_bounds(scenario, ppsim::bounds_options_for(info));
      for (const ppsim::NamedBound &bound : report.lower_bounds) {
        CAPTURE(bound.name);
        if (bound.bounds_makespan)
          CHECK(bound.value <= capped.metrics.makespan);
      }
      const std::optional<Ticks> iteration_bound =
          ppsim::iteration_lower_bound(scenario, report.best_lower_bound);
      REQUIRE(iteration_bound.has_value() == capped.metrics.iteration.has_value());
      if (iteration_bound)
        CHECK(*iteration_bound <= *capped.metrics.iteration);
      ++checked;
    }
  }
  CHECK(checked >= 2 * static_cast<int>(ppsim::schedule_registry().size()));
}
