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
    CHECK(later.run.base_schedule.device_ops == plain.run.schedule.device_ops);
    REQUIRE(later.lower_bound().has_value());
    CHECK(later.lower_bound() == direct.lower_bound());
    CHECK(later.simulation.metrics.makespan >= *later.lower_bound());
    CHECK(later.report().best_lower_bound == later.lower_bound());
  }
  CHECK(evaluate_policy(plain.run, "ilp").run.remat_status == "optimal");
}
