// `--remat POLICY` of ppsim simulate (model.md 10, remat.md 6).
#include "remat/policy.h"

#include "sim/error.h"
#include "tests/sim/test_support.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>

using namespace ppsim;
using ppsim::testing::uniform_input;

namespace {

using Base = testing::Generated;

Base base(const std::string &name, double k) {
  ScenarioInput input = uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1});
  input.cap_activations = k;
  return testing::generate(name, input);
}

} // namespace

TEST_CASE("none, full and ilp policies") {
  const Base b = base("1f1b-split", 1);
  CHECK(apply_remat_policy(b.scenario, b.schedule, "none").device_ops == b.schedule.device_ops);
  const RematPlan full = plan_of(apply_remat_policy(b.scenario, b.schedule, "full"), 2, 2);
  CHECK(full.forward_count() == 2);
  CHECK(full.at(0, 0).forward == ForwardRemat::full);
  const Schedule ilp = apply_remat_policy(b.scenario, b.schedule, "ilp", {60, 0});
  CHECK(simulate(b.scenario, ilp).metrics.feasible);
  CHECK_FALSE(simulate(b.scenario, b.schedule).metrics.feasible);
}

TEST_CASE("file policy reads the CSV of remat.md 6") {
  const Base b = base("1f1b-split", 2);
  const std::string path = "remat_policy_test.csv";
  std::ofstream(path) << "stage,microbatch,fwd,bwd\n1,1,full,activations\n";
  const RematPlan plan = plan_of(apply_remat_policy(b.scenario, b.schedule, "file:" + path), 2, 2);
  CHECK(plan.at(1, 1) == RematDecision{ForwardRemat::full, BackwardRemat::activations});
  CHECK(plan.recompute_count() == 2);
  std::remove(path.c_str());
  CHECK_THROWS_WITH_AS(apply_remat_policy(b.scenario, b.schedule, "file:" + path),
                       "cannot read remat file 'remat_policy_test.csv'", Error);
  CHECK_THROWS_WITH_AS(apply_remat_policy(b.scenario, b.schedule, "some"),
                       "unknown remat policy 'some' (expected none, full, ilp or file:PATH)",
                       Error);
}
