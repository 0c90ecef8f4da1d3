// V-Min and V-Half (docs/schedules.md, "v-min and v-half"; sail-sg zbv_greedy.py, arXiv
// 2405.15362).
#include "../test_support.h"
#include "base/error.h"
#include "base/text_file.h"
#include "greedy_support.h"
#include "sim/io/torch_csv.h"
#include "sim/schedules/greedy.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <fmt/format.h>
#include <random>
#include <tuple>

using namespace ppsim;
using namespace ppsim::testing;

namespace {

/// Peak in chunk activations (count unit x v = 2, w_stash = 1: W frees the chunk).
double max_peak_chunks(const testing::Run &run) {
  double peak = 0;
  for (const DeviceMetrics &device : run.simulation.metrics.devices)
    peak = std::max(peak, device.peak_activations);
  return 2 * peak;
}

} // namespace

TEST_CASE("V-Min oracle p=4 m=8 unit costs: max span 59, peak 4 chunks on every device") {
  // docs/oracles.md, "V placements": span bubble 11 = 59 - 2m(F+B+W); peak (p+4) div 3 = 2
  // microbatch units.
  const auto run = run_schedule("v-min", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  CHECK(run.units(run.simulation.metrics.max_span) == 59);
  for (const DeviceMetrics &device : run.simulation.metrics.devices)
    CHECK(device.peak_activations == 2);
}

TEST_CASE("V-Half oracle p=4 m=8 unit costs: max span 53, peak 6 chunks on every device") {
  // docs/oracles.md, "V placements": span bubble 5; peak (p+2) div 2 = 3 microbatch units.
  const auto run = run_schedule("v-half", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  CHECK(run.units(run.simulation.metrics.max_span) == 53);
  for (const DeviceMetrics &device : run.simulation.metrics.devices)
    CHECK(device.peak_activations == 3);
}

TEST_CASE("V-Min / V-Half peaks follow (p+4) div 3 and (p+2) div 2 microbatch units for large m") {
  // docs/schedules.md, "v-min and v-half" closed forms (README of the sail-sg repo), F = B = W.
  for (const int p : {2, 3, 4, 5, 6, 8}) {
    const int m = 3 * p;
    CAPTURE(p);
    CHECK(max_peak_chunks(run_schedule("v-min", uniform_input(p, m, {1, 1}, {1, 1}, {1, 1}))) <=
          2 * ((p + 4) / 3));
    CHECK(max_peak_chunks(run_schedule("v-half", uniform_input(p, m, {1, 1}, {1, 1}, {1, 1}))) <=
          2 * ((p + 2) / 2));
  }
}

TEST_CASE("V-family internal end times equal the engine's ASAP times under real costs") {
  std::mt19937 random(405);
  std::uniform_int_distribution<int> cost(1, 5);
  for (const schedules::VPattern pattern : {schedules::VPattern::min, schedules::VPattern::half}) {
    for (const int p : {1, 2, 3, 4, 6}) {
      for (const int m : {1, 2, p, 2 * p + 1, 3 * p}) {
        const ScenarioInput input =
            drawn_stage_input(p, m, 2 * p, {cost(random) % 2, 3}, 1, [&] { return cost(random); });
        const Scenario scenario = build_scenario(input, find_schedule("v-min"));
        CAPTURE(p);
        CAPTURE(m);
        const schedules::TimedSchedule timed = schedules::v_family_timed(scenario, pattern);
        CHECK(testing::engine_ends(scenario, timed.schedule) == timed.end);
      }
    }
  }
}

TEST_CASE("v-min and v-half need v = 2") {
  ScenarioInput input = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  input.chunks = 4;
  CHECK_THROWS_WITH_AS(run_schedule("v-half", input),
                       "schedule 'v-half' needs exactly 2 stages per device (v = 2), got v = 4",
                       Error);
}

TEST_CASE("V-Min and V-Half orders are those of the recounting reorder they replaced") {
  // tests/sim/schedules/golden/: `ppsim export --F 1 --B 1 --W 1` of the reorder that recounted
  // the whole device for every tried slot (before the segment tree of slot_peak.h, issue 33):
  // the same orders, pass for pass, whatever the peak's bookkeeping.
  for (const auto &[name, p, m] : {std::tuple{"v-half", 6, 13}, std::tuple{"v-min", 7, 24}}) {
    CAPTURE(name);
    const auto run = run_schedule(name, uniform_input(p, m, {1, 1}, {1, 1}, {1, 1}));
    const std::string golden = read_text_file(
        fmt::format(PPSIM_SOURCE_DIR "/tests/sim/schedules/golden/{}-{}-{}.csv", name, p, m),
        "golden");
    CHECK(write_torch_csv(run.scenario, run.schedule).text == golden);
  }
}
