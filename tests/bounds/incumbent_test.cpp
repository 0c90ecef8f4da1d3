// The serial schedule and the best registered schedule (docs/bounds.md, "Exact optimum", step 1).
#include "base/error.h"
#include "bounds/incumbent.h"
#include "sim/memory.h"
#include "sim/placement.h"
#include "tests/bounds/registered_support.h"
#include "tests/sim/test_support.h"

#include <doctest/doctest.h>

#include <string>

using ppsim::BackwardForm;
using ppsim::testing::uniform_input;

TEST_CASE("the serial schedule holds at most one activation per device, even at K = 1") {
  for (const std::string name : {"1f1b", "zb-h1", "zb-v", "interleaved-1f1b"}) {
    CAPTURE(name);
    ppsim::ScenarioInput input = uniform_input(3, 4, {1, 1}, {2, 1}, {1, 1});
    input.cap_activations = 1.0;
    const ppsim::Scenario scenario = ppsim::testing::scenario_for(name, input);
    for (const BackwardForm form : {BackwardForm::full, BackwardForm::split}) {
      const ppsim::Schedule serial = ppsim::serial_schedule(scenario, form, true);
      const ppsim::Simulation run = ppsim::simulate(scenario, serial);
      CHECK(run.metrics.feasible);
      for (const ppsim::DeviceMetrics &device : run.metrics.devices)
        CHECK(device.peak_activations <= 1.0);
    }
  }
}

TEST_CASE("the best known schedule is the fastest registered one that fits the cap") {
  for (const double cap : {2.0, 3.0, 4.0}) {
    CAPTURE(cap);
    ppsim::ScenarioInput input = uniform_input(4, 8, {1, 1}, {2, 1}, {1, 1});
    input.cap_activations = cap;
    const ppsim::Scenario scenario = ppsim::testing::scenario_for("zb-h1", input);
    const ppsim::Incumbent best =
        ppsim::best_known_schedule(scenario, BackwardForm::split, ppsim::cap_can_bind(scenario));
    const ppsim::Simulation replay = ppsim::simulate(scenario, best.schedule);
    CHECK(replay.metrics.feasible);
    CHECK(replay.metrics.makespan == best.makespan);
    CHECK(ppsim::testing::check_not_slower_than_registered(scenario, BackwardForm::split,
                                                           best.makespan) > 0);
  }
}

TEST_CASE("the best known schedule refuses a cap below one activation") {
  ppsim::ScenarioInput input = uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1});
  input.cap_activations = 0.5;
  const ppsim::Scenario scenario = ppsim::testing::scenario_for("1f1b", input);
  CHECK_THROWS_WITH_AS(ppsim::best_known_schedule(scenario, BackwardForm::full, true),
                       "no schedule fits the memory cap: it is below one activation of some stage",
                       ppsim::Error);
  CHECK_FALSE(ppsim::cap_can_bind(
      ppsim::testing::scenario_for("1f1b", uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1}))));
  CHECK(ppsim::cap_can_bind(scenario));
}
