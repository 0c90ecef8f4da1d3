// Closed forms of docs/bounds.md, "Closed forms" against simulation, over every registered schedule
// that has one, on seeded random uniform instances.
#include "base/error.h"
#include "bounds/closed_forms.h"
#include "tests/sim/test_support.h"

#include <doctest/doctest.h>

#include <random>

using ppsim::Ticks;
using ppsim::testing::uniform_input;

TEST_CASE("closed forms equal simulated makespans wherever they claim validity") {
  std::mt19937 random(20261122);
  std::uniform_int_distribution<int> cost(1, 3);
  int checked = 0;
  for (const ppsim::ScheduleInfo &info : ppsim::schedule_registry()) {
    for (int trial = 0; trial < 40; ++trial) {
      const int p = 2 + trial % 3;
      const int m = 1 + (trial * 7) % 10;
      const bool unit = trial % 4 == 0;
      const int f = unit ? 1 : cost(random), b = unit ? 1 : cost(random),
                w = unit ? 1 : cost(random) - 1;
      ppsim::ScenarioInput input = uniform_input(p, m, {f, 1}, {b, 1}, {w, 1});
      ppsim::Scenario scenario;
      ppsim::Schedule schedule;
      try {
        scenario = ppsim::build_scenario(input, info);
        schedule = ppsim::generate_schedule(info, scenario, {});
      } catch (const ppsim::Error &) {
        continue; // outside the generator's range (m < 2p for DualPipeV, ...)
      }
      const std::optional<Ticks> form = ppsim::closed_form_makespan(scenario, info.name);
      if (!form)
        continue;
      CAPTURE(info.name);
      CAPTURE(p);
      CAPTURE(m);
      CAPTURE(f);
      CAPTURE(b);
      CAPTURE(w);
      CHECK(ppsim::simulate(scenario, schedule).metrics.makespan == *form);
      ++checked;
    }
  }
  CHECK(checked > 150);
}

TEST_CASE("issue_29 no closed form claims a schedule whose actions pay the runtime's overhead") {
  ppsim::ScenarioInput input = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  REQUIRE(ppsim::closed_form_makespan(
      ppsim::build_scenario(input, ppsim::find_schedule("1f1b")), "1f1b"));
  input.op_overhead = {1, 10};
  CHECK_FALSE(ppsim::closed_form_makespan(
      ppsim::build_scenario(input, ppsim::find_schedule("1f1b")), "1f1b"));
}

TEST_CASE("closed form oracles (docs/oracles.md)") {
  const auto form = [](const std::string &name, ppsim::ScenarioInput input) {
    return ppsim::closed_form_makespan(ppsim::build_scenario(input, ppsim::find_schedule(name)),
                                       name);
  };
  CHECK(form("1f1b", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1})) == Ticks{33});
  CHECK(form("gpipe", uniform_input(4, 8, {2, 1}, {2, 1}, {2, 1}, {1, 1})) == Ticks{72});
  CHECK(form("zb-h1", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1})) == Ticks{27});
  CHECK(form("1f1b-split", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1})) == Ticks{30});
  CHECK(form("interleaved-1f1b", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}, {0, 1}, 2)) ==
        Ticks{57});
  CHECK(form("zb-v", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1})) == Ticks{51});
  // 1F1B with latency has no closed form (O-3: 41, not 36); neither does DualPipe.
  CHECK_FALSE(form("1f1b", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}, {1, 2})).has_value());
  CHECK_FALSE(form("dualpipe", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1})).has_value());
  // Non-uniform stages: no closed form.
  ppsim::ScenarioInput uneven = uniform_input(2, 4, {1, 1}, {1, 1}, {1, 1});
  uneven.forward = {{1, 1}, {2, 1}};
  CHECK_FALSE(form("1f1b", uneven).has_value());
}

TEST_CASE("issue_16 gpipe with several stages per device has no closed form (v is not in it)") {
  auto input = uniform_input(2, 1, {1, 1}, {1, 1}, {1, 1});
  input.chunks = 2;
  const auto run = ppsim::testing::run_schedule("gpipe", input);
  CHECK_FALSE(ppsim::closed_form_makespan(run.scenario, "gpipe", 0).has_value());
  input.chunks = 1;
  const auto single = ppsim::testing::run_schedule("gpipe", input);
  CHECK(ppsim::closed_form_makespan(single.scenario, "gpipe", 0) ==
        single.simulation.metrics.makespan);
}
