// `--remat POLICY` of ppsim simulate (docs/model.md, "Command line and JSON", docs/remat.md,
// "Simple policies").
#include "run/policy.h"

#include "base/error.h"
#include "tests/sim/test_support.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>

using namespace ppsim;
using ppsim::testing::uniform_input;

namespace {

struct Base {
  ScenarioInput input;
  Scenario scenario;
  Schedule schedule;
};

Base base(const std::string &name, double k) {
  ScenarioInput input = uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1});
  input.cap_activations = k;
  testing::Generated generated = testing::generate(name, input);
  return {input, std::move(generated.scenario), std::move(generated.schedule)};
}

Schedule with_policy(const Base &b, const std::string &policy, const IlpOptions &ilp = {}) {
  return apply_remat_policy(b.input, b.scenario, b.schedule, policy, ilp).schedule;
}

} // namespace

TEST_CASE("none, full and ilp policies") {
  const Base b = base("1f1b-split", 1);
  CHECK(with_policy(b, "none").device_ops == b.schedule.device_ops);
  const RematPlan full = plan_of(with_policy(b, "full"), 2, 2);
  CHECK(full.forward_count() == 2);
  CHECK(full.at(0, 0).forward == ForwardRemat::full);
  const Schedule ilp = with_policy(b, "ilp", {60, 0});
  CHECK(simulate(b.scenario, ilp).metrics.feasible);
  CHECK_FALSE(simulate(b.scenario, b.schedule).metrics.feasible);
}

TEST_CASE("file policy reads the CSV of docs/remat.md, Simple policies") {
  const Base b = base("1f1b-split", 2);
  const std::string path = "remat_policy_test.csv";
  std::ofstream(path) << "stage,microbatch,fwd,bwd\n1,1,full,activations\n";
  const RematPlan plan = plan_of(with_policy(b, "file:" + path), 2, 2);
  CHECK(plan.at(1, 1) == RematDecision{ForwardRemat::full, BackwardRemat::activations});
  CHECK(plan.recompute_count() == 2);
  std::remove(path.c_str());
  CHECK_THROWS_WITH_AS(with_policy(b, "file:" + path),
                       "remat_policy_test.csv: cannot open the remat plan file", Error);
  CHECK_THROWS_WITH_AS(
      with_policy(b, "some"),
      "unknown remat policy 'some' (expected none, full, selective, ilp or file:PATH)", Error);
}

TEST_CASE("issue_12 selective recomputes every attention core under its own costs") {
  // R = 1/4 of F and F keeps 3/4 of its activation (the values a cost file's
  // recompute_selective_ms and activation_bytes_selective columns give): peaks drop to 3/4 per
  // kept microbatch plus the one being rebuilt, and every (s,j) runs an R of 1/4.
  Base b = base("1f1b", 8);
  b.input.recompute_selective = {{1, 4}};
  b.input.bytes.activation = {100};
  b.input.bytes.selective_activation = {75};
  b.input.memory_model = MemoryModel::bytes;
  b.scenario = build_scenario(b.input, find_schedule("1f1b"));
  const PolicyRun selective = apply_remat_policy(b.input, b.scenario, b.schedule, "selective");
  CHECK(plan_of(selective.schedule, 2, 2).forward_count() == 4);
  CHECK(selective.scenario.stage_costs[0].recompute_forward ==
        selective.scenario.time_scale.to_ticks({1, 4}));
  CHECK(selective.scenario.bytes->stages[0].checkpoint == 75);
  // Device 0 keeps 75 for F(0,0) and for F(0,1); R(0,0) turns its 75 back into the whole 100.
  const Simulation run = simulate(selective.scenario, selective.schedule);
  CHECK(run.metrics.devices[0].peak_bytes == 75 + 100);
}
