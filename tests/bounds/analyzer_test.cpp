// compute_bounds (bounds/analyzer.cpp): which bounds are reported for each backward form, the
// best bound, the closed form and the gap.
#include "bounds/analyzer.h"
#include "tests/sim/test_support.h"

#include <doctest/doctest.h>

#include <algorithm>

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
