// One run end to end (run/evaluate.h): the same run whether its policy is applied at prepare time
// or to a run prepared without recomputation, with bounds only where they hold.
#include "run/evaluate.h"

#include "tests/sim/test_support.h"

#include <doctest/doctest.h>

using namespace ppsim;
using ppsim::testing::uniform_input;

TEST_CASE("a run's policy applied later gives the run prepared with it") {
  RunInput input = uniform_input(4, 8, {3, 2}, {5, 2}, {1, 1});
  input.schedule = "1f1b";
  input.cap_activations = 3;
  const Evaluation plain = evaluate_run(input);
  CHECK_FALSE(plain.fits());
  CHECK_FALSE(plain.bounds.has_value()); // the bounds assume the cap holds
  CHECK(plain.run.remat_status.empty());
  for (const std::string policy : {"full", "ilp"}) {
    CAPTURE(policy);
    input.remat_policy = policy;
    const Evaluation direct = evaluate_run(input);
    const Evaluation later = evaluate_policy(plain.run, policy);
    CHECK(direct.fits());
    CHECK(later.makespan() == direct.makespan());
    CHECK(later.run.schedule.device_ops == direct.run.schedule.device_ops);
    CHECK(later.run.input.remat_policy == policy);
    CHECK(later.run.base_schedule().device_ops == plain.run.schedule.device_ops);
    REQUIRE(later.lower_bound().has_value());
    CHECK(later.lower_bound() == direct.lower_bound());
    CHECK(later.simulation.metrics.makespan >= *later.lower_bound());
    CHECK(later.report().best_lower_bound == later.lower_bound());
  }
  CHECK(evaluate_policy(plain.run, "ilp").run.remat_status == "optimal");
}

TEST_CASE("a prepared run keeps its schedule's index from validation, dropped with a policy") {
  // The run validates and indexes its schedule once (issue 33): the index prepare_run built is
  // what the engine runs on, the same timing as a fresh simulate, and a recomputed schedule
  // gets its own.
  RunInput input = uniform_input(4, 8, {3, 2}, {5, 2}, {1, 1});
  input.schedule = "zb-h1";
  const Evaluation plain = evaluate_run(input);
  REQUIRE(plain.run.locator != nullptr);
  CHECK(plain.run.locator->entry_count() == 3 * 4 * 8);
  const Simulation fresh = simulate(plain.run.scenario, plain.run.schedule);
  CHECK(plain.simulation.timing.start == fresh.timing.start);
  CHECK(plain.simulation.timing.end == fresh.timing.end);
  CHECK(plain.simulation.metrics.makespan == fresh.metrics.makespan);
  CHECK(evaluate_policy(plain.run, "none").run.locator == plain.run.locator);
  const Evaluation full = evaluate_policy(plain.run, "full");
  CHECK(full.run.locator == nullptr);
  CHECK(full.simulation.metrics.makespan ==
        simulate(full.run.scenario, full.run.schedule).metrics.makespan);
}
