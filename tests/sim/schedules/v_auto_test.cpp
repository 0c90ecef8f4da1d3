// Building-block search (docs/schedules.md, "v-auto"; sail-sg v_auto_schedule.py, arXiv
// 2405.15362).
#include "../test_support.h"
#include "base/error.h"
#include "greedy_support.h"
#include "sim/schedules/v_auto.h"

#include <doctest/doctest.h>

#include <map>

using namespace ppsim;
using namespace ppsim::testing;

namespace {

std::map<int, int> frontier_of(const schedules::VAutoResult &result) {
  std::map<int, int> frontier;
  for (const schedules::FrontierPoint &point : result.frontier)
    frontier[point.peak_chunks] = point.bubble_slots;
  return frontier;
}

} // namespace

TEST_CASE("O-13 frontier p=4 for m = 8, 12, 16: {4: 11, 5: 8, 6: 5, 7: 3, 8: 0}") {
  // docs/oracles.md, "V placements"; the source's expected bubble is 6p - 1 - 3M for M <= 2p-2, 3
  // at 2p-1, 0 at 2p.
  const std::map<int, int> expected{{4, 11}, {5, 8}, {6, 5}, {7, 3}, {8, 0}};
  for (const int m : {8, 12, 16}) {
    CAPTURE(m);
    const Scenario scenario = scenario_for("v-auto", uniform_input(4, m, {1, 1}, {1, 1}, {1, 1}));
    CHECK(frontier_of(schedules::v_auto_search(scenario, 8)) == expected);
  }
}

TEST_CASE("v-auto frontier follows the source's expected bubble for p = 3, 5, 6") {
  // docs/schedules.md, "v-auto": bubble(M) = 3p - 1 - 3M + max(3p, p - 1 + 2(1 + floor((M+1)/2))).
  for (const int p : {3, 5, 6}) {
    const Scenario scenario =
        scenario_for("v-auto", uniform_input(p, 3 * p, {1, 1}, {1, 1}, {1, 1}));
    const schedules::VAutoResult result = schedules::v_auto_search(scenario, 2 * p);
    CAPTURE(p);
    REQUIRE_FALSE(result.frontier.empty());
    CHECK(result.frontier.back().peak_chunks == 2 * p);
    for (const schedules::FrontierPoint &point : result.frontier) {
      const int M = point.peak_chunks;
      CAPTURE(M);
      CHECK(point.bubble_slots ==
            3 * p - 1 - 3 * M + std::max(3 * p, p - 1 + 2 * (1 + (M + 1) / 2)));
    }
  }
}

TEST_CASE("v-auto best schedule: engine ASAP times equal the search's, peak within the cap") {
  for (const int cap_k : {2, 3, 4}) {
    ScenarioInput input = uniform_input(4, 10, {2, 1}, {3, 1}, {1, 1}, {1, 2});
    input.cap_activations = cap_k;
    const Scenario scenario = scenario_for("v-auto", input);
    const schedules::VAutoResult result = schedules::v_auto_search(scenario, 2 * cap_k);
    CAPTURE(cap_k);
    const Simulation simulation =
        testing::check_asap_within_cap(scenario, result.best, result.best_end, cap_k);
    CHECK(2 * cap_k >= result.best_peak_chunks);
    CHECK(simulation.metrics.max_span == result.best_span);
    // The registered generator reads the cap from --K.
    const auto run = run_schedule("v-auto", input);
    CHECK(run.schedule.device_ops == result.best.device_ops);
  }
}

TEST_CASE("v-auto is deterministic whatever the thread count") {
  const Scenario scenario = scenario_for("v-auto", uniform_input(5, 7, {1, 1}, {2, 1}, {1, 1}));
  const schedules::VAutoResult one = schedules::v_auto_search(scenario, 8, 1);
  const schedules::VAutoResult three = schedules::v_auto_search(scenario, 8, 3);
  CHECK(one.best.device_ops == three.best.device_ops);
  CHECK(frontier_of(one) == frontier_of(three));
}

TEST_CASE("v-auto reports each starting pattern searched, from every worker") {
  const Scenario scenario = scenario_for("v-auto", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  std::vector<std::pair<std::size_t, std::size_t>> reports;
  const auto progress = [&](std::size_t done, std::size_t total, std::string_view) {
    reports.emplace_back(done, total);
  };
  schedules::v_auto_search(scenario, 8, 3, progress);
  // 60 starting patterns (F, B and W in distinct slots of the 6-slot period: 5 x 4 x 3).
  REQUIRE(reports.size() == 61);
  for (std::size_t k = 0; k < reports.size(); ++k)
    CHECK(reports[k] == std::pair<std::size_t, std::size_t>{k, 60});
}

TEST_CASE("v-auto rejects p = 1, v != 2 and caps no block fits") {
  CHECK_THROWS_WITH_AS(
      run_schedule("v-auto", uniform_input(1, 4, {1, 1}, {1, 1}, {1, 1})),
      "schedule 'v-auto' needs at least 2 devices (its building blocks span p >= 2)", Error);
  ScenarioInput input = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  input.chunks = 4;
  CHECK_THROWS_WITH_AS(run_schedule("v-auto", input),
                       "schedule 'v-auto' needs exactly 2 stages per device (v = 2), got v = 4",
                       Error);
  input.chunks = 2;
  input.cap_activations = 1;
  CHECK_THROWS_WITH_AS(run_schedule("v-auto", input),
                       "schedule 'v-auto' found no building block within 2 chunk activations per "
                       "device (--K 1)",
                       Error);
}
