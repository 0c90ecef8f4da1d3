// Exact optimum (docs/bounds.md, "Exact optimum") against the bounds and the registered schedules
// on seeded tiny instances: LB <= OPT <= every feasible schedule, best bound = OPT at K >= m, and
// the replay of the returned orders reaches OPT within the cap.
#include "base/error.h"
#include "bounds/analyzer.h"
#include "bounds/exact.h"
#include "bounds/incumbent.h"
#include "sim/placement.h"
#include "tests/sim/test_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <fmt/format.h>
#include <random>
#include <string>
#include <vector>

using ppsim::BackwardForm;
using ppsim::Ticks;
using ppsim::testing::uniform_input;

namespace {

ppsim::Scenario scenario_for(const ppsim::ScenarioInput &input, const std::string &schedule) {
  return ppsim::build_scenario(input, ppsim::find_schedule(schedule));
}

/// One report of the exact optimum's progress.
struct HorizonReport {
  std::size_t done = 0;
  std::size_t total = 0;
  std::string step;
};

ppsim::ExactOptions always_solve() {
  ppsim::ExactOptions options;
  options.stop_when_bound_met = false;
  options.time_limit_seconds = 120;
  return options;
}

// The exact optimum (full backward) with every progress report recorded in `reports`.
ppsim::ExactResult solve_recording(const ppsim::Scenario &scenario,
                                   std::vector<HorizonReport> &reports) {
  ppsim::ExactOptions options = always_solve();
  options.progress = [&](std::size_t done, std::size_t total, std::string_view step) {
    reports.push_back({done, total, std::string(step)});
  };
  return ppsim::exact_optimum(scenario, BackwardForm::full, options);
}

/// The returned orders are a valid schedule that fits the cap and ends at the optimum.
void check_replay(const ppsim::Scenario &scenario, const ppsim::ExactResult &result) {
  const ppsim::Simulation replay = ppsim::simulate(scenario, result.schedule);
  CHECK(replay.metrics.feasible);
  CHECK(replay.metrics.makespan == result.makespan);
}

/// LB <= OPT <= makespan of every registered schedule of the same placement and backward form
/// that fits the cap.
void check_sandwich(const ppsim::ScenarioInput &input, const ppsim::Scenario &scenario,
                    BackwardForm form, const ppsim::ExactResult &result) {
  REQUIRE(result.proven_optimal);
  const ppsim::BoundsReport report = ppsim::compute_bounds(scenario, {form, "", 0});
  for (const ppsim::NamedBound &bound : report.lower_bounds) {
    CAPTURE(bound.name);
    if (bound.bounds_makespan)
      CHECK(bound.value <= result.makespan);
  }
  for (const ppsim::ScheduleInfo &info : ppsim::schedule_registry()) {
    if (info.split_backward != (form == BackwardForm::split) ||
        info.placement != ppsim::PlacementKind::single_wave)
      continue;
    ppsim::testing::Run run;
    try {
      run = ppsim::testing::run_schedule(info.name, input);
    } catch (const ppsim::Error &) {
      continue;
    }
    CAPTURE(info.name);
    if (run.simulation.metrics.feasible)
      CHECK(result.makespan <= run.simulation.metrics.makespan);
  }
  check_replay(scenario, result);
}

} // namespace

TEST_CASE("K = 1 oracles: the optimum meets LB2 on p = 2 (docs/oracles.md)") {
  // All-remat 1F1B runs in 12 and 17 (docs/oracles.md, "Bounds at small caps"); the optimum keeps a
  // few activations and reaches LB2 = 11 and 15.
  for (const auto &[backward, lb2, allremat] : {std::tuple{1, 11, 12}, std::tuple{2, 15, 17}}) {
    ppsim::ScenarioInput input = uniform_input(2, 4, {1, 1}, {backward, 1}, {0, 1});
    input.cap_activations = 1.0;
    const ppsim::Scenario scenario = scenario_for(input, "1f1b");
    std::vector<HorizonReport> reports;
    const ppsim::ExactResult result = solve_recording(scenario, reports);
    CHECK(result.proven_optimal);
    CHECK(result.method == "ilp");
    CHECK(result.makespan == Ticks{lb2});
    // The first horizon, LB2, has a schedule: it completes every horizon up to the incumbent's.
    REQUIRE(reports.size() == 2);
    CHECK(reports[0].done == 0);
    CHECK(reports[1].done == reports[1].total);
    CHECK(reports[1].step == fmt::format("a schedule ends by {}", lb2));
    CHECK(ppsim::compute_bounds(scenario, {}).best_lower_bound == Ticks{lb2});
    CHECK(ppsim::testing::run_schedule("allremat-1f1b", input).simulation.metrics.makespan ==
          Ticks{allremat});
    check_sandwich(input, scenario, BackwardForm::full, result);
  }
}

TEST_CASE("random tiny instances: LB <= OPT <= every feasible schedule") {
  // Seeded; p <= 3, m <= 4, heterogeneous integer costs, K in {1, 2, uncapped}.
  std::mt19937 random(1122);
  std::uniform_int_distribution<int> cost(1, 3);
  for (int trial = 0; trial < 6; ++trial) {
    const int p = 1 + trial % 3;
    const int m = 2 + (trial / 2) % 3;
    ppsim::ScenarioInput input = uniform_input(p, m, {1, 1}, {1, 1}, {0, 1});
    input.forward.clear();
    input.backward_input.clear();
    for (int s = 0; s < p; ++s) {
      input.forward.push_back({cost(random), 1});
      input.backward_input.push_back({cost(random), 1});
    }
    if (trial % 3 != 2)
      input.cap_activations = static_cast<double>(1 + trial % 2);
    CAPTURE(trial);
    const ppsim::Scenario scenario = scenario_for(input, "1f1b");
    std::vector<HorizonReport> reports;
    const ppsim::ExactResult result = solve_recording(scenario, reports);
    check_sandwich(input, scenario, BackwardForm::full, result);
    // Progress: every horizon from the best lower bound up to the optimum is decided infeasible,
    // one report each, and the reports end at the total (the incumbent's makespan).
    const Ticks bound = ppsim::compute_bounds(scenario, {}).best_lower_bound;
    REQUIRE_FALSE(reports.empty());
    CHECK(reports.front().done == 0);
    CHECK(reports.back().done == reports.back().total);
    const auto infeasible =
        std::count_if(reports.begin(), reports.end(), [](const HorizonReport &report) {
          return report.step.starts_with("no schedule ends by ");
        });
    CHECK(infeasible == (result.makespan - bound).count());
    for (std::size_t k = 1; k < reports.size(); ++k)
      CHECK(reports[k].done > reports[k - 1].done);
  }
}

TEST_CASE("issue_29 a runtime overhead per action: LB <= OPT <= every feasible schedule") {
  // The ILP's ops take the engine's durations, the overhead included (and none for R); the
  // bounds leave it out and stay below.
  for (const bool split : {false, true}) {
    for (const double k : {1.0, 2.0}) {
      CAPTURE(split);
      CAPTURE(k);
      ppsim::ScenarioInput input =
          uniform_input(2, 2, {2, 1}, {2, 1}, {split ? 1 : 0, 1});
      input.op_overhead = {1, 2};
      input.cap_activations = k;
      const BackwardForm form = split ? BackwardForm::split : BackwardForm::full;
      const ppsim::Scenario scenario = scenario_for(input, split ? "1f1b-split" : "1f1b");
      ppsim::ExactOptions options;
      options.stop_when_bound_met = false;
      check_sandwich(input, scenario, form, ppsim::exact_optimum(scenario, form, options));
    }
  }
}

TEST_CASE("K >= m: the best lower bound is the optimum") {
  std::mt19937 random(77);
  std::uniform_int_distribution<int> cost(1, 3);
  for (int trial = 0; trial < 4; ++trial) {
    const int p = 2 + trial % 2, m = 2 + trial % 3;
    ppsim::ScenarioInput input = uniform_input(p, m, {cost(random), 1}, {cost(random), 1}, {0, 1});
    input.cap_activations = static_cast<double>(m);
    const ppsim::Scenario scenario = scenario_for(input, "1f1b");
    const ppsim::ExactResult result =
        ppsim::exact_optimum(scenario, BackwardForm::full, always_solve());
    CAPTURE(trial);
    CHECK(result.makespan == ppsim::compute_bounds(scenario, {}).best_lower_bound);
    check_sandwich(input, scenario, BackwardForm::full, result);
  }
}

TEST_CASE("split backward: LB3 <= OPT <= ZB schedules") {
  ppsim::ScenarioInput input = uniform_input(2, 3, {1, 1}, {1, 1}, {1, 1});
  const ppsim::Scenario scenario = scenario_for(input, "zb-h1");
  const ppsim::ExactResult result =
      ppsim::exact_optimum(scenario, BackwardForm::split, always_solve());
  // (p-1)F + m(F+B+W) = 1 + 9 = 10 (docs/bounds.md, "The bounds") is attained here.
  CHECK(result.makespan == Ticks{10});
  check_sandwich(input, scenario, BackwardForm::split, result);
}

TEST_CASE("LB4 <= OPT on split single-wave and V instances, with recomputation cheaper than F") {
  // Seeded; heterogeneous integer costs, r in [1, F], caps that bind. LB4 must stay below the
  // optimum, and it must be the strictly best bound somewhere, or this test would check nothing.
  std::mt19937 random(2026);
  std::uniform_int_distribution<int> cost(1, 3);
  int strictly_best = 0;
  for (int trial = 0; trial < 8; ++trial) {
    const bool v_shape = trial % 4 == 3;
    const int p = v_shape ? 2 : 2 + trial % 2;
    const int m = v_shape || p == 3 ? 2 : 3 + (trial / 2) % 2; // keeps each solve under a second
    const int stages = v_shape ? 2 * p : p;
    ppsim::ScenarioInput input =
        uniform_input(p, m, {1, 1}, {1, 1}, {1, 1}, {0, 1}, v_shape ? 2 : 0);
    input.forward.clear();
    input.backward_input.clear();
    input.backward_weight.clear();
    for (int s = 0; s < stages; ++s) {
      input.forward.push_back({cost(random), 1});
      input.backward_input.push_back({cost(random), 1});
      input.backward_weight.push_back({cost(random) % 2 + 1, 1});
      input.recompute_forward.push_back(
          {std::uniform_int_distribution<int>(1, static_cast<int>(input.forward.back().numerator))(
               random),
           1});
    }
    input.cap_activations = v_shape ? 1.5 : static_cast<double>(1 + trial % 2);
    CAPTURE(trial);
    const ppsim::Scenario scenario = scenario_for(input, v_shape ? "zb-v" : "zb-h1");
    const ppsim::ExactResult result =
        ppsim::exact_optimum(scenario, BackwardForm::split, always_solve());
    REQUIRE(result.proven_optimal);
    const ppsim::BoundsReport report =
        ppsim::compute_bounds(scenario, {BackwardForm::split, "", 0});
    const std::optional<Ticks> lb4 = report.find("LB4");
    REQUIRE(lb4.has_value());
    CHECK(*lb4 <= result.makespan);
    const bool above_all =
        std::all_of(report.lower_bounds.begin(), report.lower_bounds.end(),
                    [&](const ppsim::NamedBound &bound) {
                      return bound.name == "LB4" || !bound.bounds_makespan || bound.value < *lb4;
                    });
    strictly_best += above_all ? 1 : 0;
  }
  CHECK(strictly_best > 0);
}

TEST_CASE("a caller's incumbent gives the horizon in place of the registered schedules") {
  // K = 1 oracle of docs/oracles.md (optimum 11, LB2 11): the serial schedule, given by the
  // caller, is the incumbent; the search still finds the optimum below it.
  ppsim::ScenarioInput input = uniform_input(2, 4, {1, 1}, {1, 1}, {0, 1});
  input.cap_activations = 1.0;
  const ppsim::Scenario scenario = scenario_for(input, "1f1b");
  ppsim::ExactOptions options = always_solve();
  const ppsim::Schedule serial = ppsim::serial_schedule(scenario, BackwardForm::full, true);
  const Ticks serial_makespan = ppsim::simulate(scenario, serial).metrics.makespan;
  options.incumbent = ppsim::Incumbent{"given", serial, serial_makespan};
  const ppsim::ExactResult result = ppsim::exact_optimum(scenario, BackwardForm::full, options);
  CHECK(result.incumbent == "given");
  CHECK(result.proven_optimal);
  CHECK(result.makespan == Ticks{11});
  CHECK(serial_makespan > Ticks{11});
  check_replay(scenario, result);
}

TEST_CASE("a registered schedule meeting the bound skips the ILP") {
  const ppsim::Scenario scenario =
      scenario_for(uniform_input(3, 4, {1, 1}, {2, 1}, {0, 1}), "1f1b");
  const ppsim::ExactResult result = ppsim::exact_optimum(scenario, BackwardForm::full);
  CHECK(result.method == "lower bound met");
  CHECK(result.makespan == Ticks{18});
  CHECK(result.start_variables == 0);
  check_replay(scenario, result);
}

TEST_CASE("size guard and errors") {
  ppsim::ScenarioInput input = uniform_input(3, 4, {1, 1}, {1, 1}, {0, 1});
  input.cap_activations = 1.0;
  ppsim::ExactOptions options;
  options.max_start_variables = 100;
  CHECK_THROWS_WITH(
      ppsim::exact_optimum(scenario_for(input, "1f1b"), BackwardForm::full, options),
      "instance too large for the exact optimum: 246 start-time variables (p = 3, "
      "m = 4, horizon 13 ticks), the limit is 100; use smaller p, m or coarser costs");
  input.cap_activations = 0.5;
  CHECK_THROWS_WITH(ppsim::exact_optimum(scenario_for(input, "1f1b"), BackwardForm::full),
                    "no schedule fits the memory cap: it is below one activation of some stage");
  // Zero-length ops (their memory and their ties are outside the time-indexed model) and an
  // overlapped F&B shorter than its parts: refused.
  ppsim::ScenarioInput instant = input;
  instant.recompute_forward = {{0, 1}};
  CHECK_THROWS_WITH(ppsim::exact_optimum(scenario_for(instant, "1f1b"), BackwardForm::full),
                    "the exact optimum needs every F, B and recomputation longer than 0 ticks");
  ppsim::ScenarioInput split = input;
  split.backward_weight = {{1, 1}};
  split.recompute_full_backward = {{0, 1}};
  CHECK_THROWS_WITH(ppsim::exact_optimum(scenario_for(split, "zb-h1"), BackwardForm::split),
                    "the exact optimum needs every F, B and recomputation longer than 0 ticks");
  ppsim::Scenario overlapped = scenario_for(input, "1f1b");
  overlapped.overlap_duration = Ticks{1};
  CHECK_THROWS_WITH(ppsim::exact_optimum(overlapped, BackwardForm::full),
                    "field 'pipeline.overlap_fb': the exact optimum takes an overlapped F&B op as "
                    "long as its parts; leave overlap_fb at its default");
  // A checkpoint level's partial recomputation is not in the model: refused.
  ppsim::Scenario levels = scenario_for(input, "1f1b");
  levels.activations.stages[0].checkpoint_levels.push_back({0.5, 1.0});
  CHECK_THROWS_WITH(ppsim::exact_optimum(levels, BackwardForm::full),
                    "field 'remat.checkpoint_levels': the exact optimum does not model checkpoint "
                    "levels; leave them out");
  // Links the ILP does not model: refused, not solved and then failed on the replay.
  input.cap_activations = 1.0;
  input.latency = {1, 1};
  for (const bool blocking : {false, true}) {
    ppsim::ScenarioInput links = input;
    (blocking ? links.blocking : links.contention) = true;
    CHECK_THROWS_WITH(ppsim::exact_optimum(scenario_for(links, "1f1b"), BackwardForm::full),
                      blocking ? "field 'cluster.link.blocking': the exact optimum assumes links "
                                 "without contention and non-blocking sends (cluster.runtime = "
                                 "\"ideal\")"
                               : "field 'cluster.link.contention': the exact optimum assumes "
                                 "links without contention and non-blocking sends "
                                 "(cluster.runtime = \"ideal\")");
  }
}
