// Remat plans and their replay (docs/remat.md, "The three options" and "Simple policies";
// docs/model.md, "Memory models" and "Dependencies").
#include "base/index.h"
#include "remat/plan.h"

#include "base/error.h"
#include "tests/sim/test_support.h"

#include <doctest/doctest.h>

using namespace ppsim;
using ppsim::testing::uniform_input;

namespace {

std::vector<std::string> device_tokens(const Schedule &schedule, int device) {
  std::vector<std::string> tokens;
  for (const Op &op : schedule.device_ops[ppsim::at(device)]) {
    tokens.push_back(describe(op));
  }
  return tokens;
}

} // namespace

TEST_CASE("apply_plan puts R right before B and RW/RBW right before W") {
  const auto b = testing::generate("1f1b-split", uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1}));
  RematPlan plan = empty_plan(b.scenario);
  plan.at(0, 0) = {ForwardRemat::full, BackwardRemat::activations};
  plan.at(0, 1).backward = BackwardRemat::full;
  const Schedule schedule = apply_plan(b.schedule, plan);
  CHECK(device_tokens(schedule, 0) == std::vector<std::string>{"F(0,0)", "F(0,1)", "R(0,0)",
                                                               "B(0,0)", "RW(0,0)", "W(0,0)",
                                                               "B(0,1)", "RBW(0,1)", "W(0,1)"});
  CHECK(schedule.device_ops[1] == b.schedule.device_ops[1]);
  CHECK(plan.forward_count() == 1);
  CHECK(plan.weight_input_count() == 1);
  CHECK(plan.full_backward_count() == 1);
  CHECK(plan_of(schedule, 2, 2) == plan);
  // The engine accepts the result and runs every inserted op.
  const Simulation simulation = simulate(b.scenario, schedule);
  CHECK(simulation.metrics.devices[0].recompute.count() > 0);
}

TEST_CASE("full remat of 1F1B at K = 1 reproduces the all-remat oracle (docs/oracles.md)") {
  // Early timing, R = F: makespan m(2F+B) + (p-1)(F+B) - 2F, peak 1 on every device.
  for (const auto &[b_cost, makespan] : {std::pair{1, 12}, std::pair{2, 17}}) {
    ScenarioInput input = uniform_input(2, 4, {1, 1}, {b_cost, 1}, {0, 1});
    input.cap_activations = 1;
    const auto b = testing::generate("1f1b", input);
    RematPlan plan = empty_plan(b.scenario);
    for (int j = 0; j < 4; ++j)
      plan.at(0, j).forward = ForwardRemat::full;
    const Simulation simulation = simulate(b.scenario, apply_plan(b.schedule, plan));
    CHECK(b.scenario.time_scale.to_units(simulation.metrics.makespan) == makespan);
    CHECK(simulation.metrics.feasible);
    CHECK(simulation.metrics.devices[0].peak_activations == 1);
    CHECK(simulation.metrics.devices[1].peak_activations == 1);
    CHECK(device_peaks(b.scenario, apply_plan(b.schedule, plan), b.scenario.activations) ==
          std::vector<double>{1, 1});
  }
}

TEST_CASE("backward options need a split backward") {
  const auto b = testing::generate("1f1b", uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1}));
  RematPlan plan = empty_plan(b.scenario);
  plan.at(1, 0).backward = BackwardRemat::activations;
  CHECK_THROWS_WITH_AS(apply_plan(b.schedule, plan),
                       "backward remat of stage 1 microbatch 0 needs a split backward (B and W), "
                       "but schedule '1f1b' runs BW(1,0)",
                       Error);
  CHECK_THROWS_WITH_AS(apply_plan(b.schedule, RematPlan(1, 2)),
                       "the remat plan covers 1 stages and 2 microbatches, but the schedule "
                       "contains F(1,0)",
                       Error);
}

TEST_CASE("remat CSV round trip and errors (docs/remat.md, 'Simple policies')") {
  RematPlan plan(2, 3);
  plan.at(0, 2) = {ForwardRemat::full, BackwardRemat::full};
  plan.at(1, 0).backward = BackwardRemat::activations;
  const std::string text = format_plan_csv(plan);
  CHECK(text == "stage,microbatch,fwd,bwd\n0,2,full,full\n1,0,none,activations\n");
  CHECK(parse_plan_csv(text, "plan.csv", 2, 3) == plan);
  CHECK_THROWS_WITH_AS(
      parse_plan_csv("stage,microbatch,fwd,bwd\n0,3,full,none\n", "plan.csv", 2, 3),
      "plan.csv:2: field 'microbatch': expected an integer in 0..2, got \"3\"", Error);
  CHECK_THROWS_WITH_AS(
      parse_plan_csv("stage,microbatch,fwd,bwd\n0,1,half,none\n", "plan.csv", 2, 3),
      "plan.csv:2: field 'fwd': expected none, full, selective or level:K, got \"half\"", Error);
  CHECK_THROWS_WITH_AS(parse_plan_csv("s,j\n", "plan.csv", 2, 3),
                       "plan.csv:1: expected the header 'stage,microbatch,fwd,bwd'", Error);
  // Two rows for one (stage, microbatch): refused, where the last once silently won.
  CHECK_THROWS_WITH_AS(
      parse_plan_csv("stage,microbatch,fwd,bwd\n0,1,full,none\n1,1,none,none\n0,1,none,none\n",
                     "plan.csv", 2, 3),
      "plan.csv:4: a second row for stage 0, microbatch 1 (the first is on line 2)", Error);
}

TEST_CASE("issue_27 a plan file names selective recomputation where a stage has it") {
  // Stage 0's selective level is 3 (after two checkpoint levels), stage 1 has none.
  const std::vector<int> selective{3, 0};
  RematPlan plan(2, 2);
  plan.at(0, 0) = {ForwardRemat::full, BackwardRemat::none, 3};
  plan.at(0, 1) = {ForwardRemat::full, BackwardRemat::none, 2};
  plan.at(1, 1).forward = ForwardRemat::full;
  const std::string text = format_plan_csv(plan, selective);
  CHECK(text ==
        "stage,microbatch,fwd,bwd\n0,0,selective,none\n0,1,level:2,none\n1,1,full,none\n");
  CHECK(parse_plan_csv(text, "plan.csv", 2, 2, selective) == plan);
  // Without the scenario's levels the same plan is written by number.
  CHECK(format_plan_csv(plan).starts_with("stage,microbatch,fwd,bwd\n0,0,level:3,none\n"));
  CHECK_THROWS_WITH_AS(
      parse_plan_csv("stage,microbatch,fwd,bwd\n1,0,selective,none\n", "plan.csv", 2, 2,
                     selective),
      "plan.csv:2: field 'fwd': stage 1 has no selective recomputation: the cost file measures "
      "none (recompute_selective_ms)",
      Error);
  CHECK_THROWS_WITH_AS(
      parse_plan_csv("stage,microbatch,fwd,bwd\n0,0,selective,none\n", "plan.csv", 2, 2),
      "plan.csv:2: field 'fwd': stage 0 has no selective recomputation: the cost file measures "
      "none (recompute_selective_ms)",
      Error);
}

TEST_CASE("capped_track needs a cap") {
  const auto b = testing::generate("1f1b", uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1}));
  CHECK_THROWS_WITH_AS(capped_track(b.scenario),
                       "remat needs a memory budget: give --K or --memory", Error);
}
