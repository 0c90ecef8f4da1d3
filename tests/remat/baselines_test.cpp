// Remat baselines (issue 5, docs/remat.md, "Simple policies"): full forward, selective, greedy.
#include "remat/baselines.h"

#include "remat/stage_remat_ilp.h"
#include "tests/sim/test_support.h"

#include <doctest/doctest.h>

using namespace ppsim;
using ppsim::testing::uniform_input;

namespace {

std::vector<RematOutcome> baselines_of(const ScenarioInput &input) {
  const ScheduleInfo &info = find_schedule(input.schedule);
  const Scenario scenario = build_scenario(input, info);
  return run_baselines(input, scenario, generate_schedule(info, scenario, {}));
}

const RematOutcome &outcome(const std::vector<RematOutcome> &all, const std::string &policy) {
  for (const RematOutcome &o : all) {
    if (o.policy == policy)
      return o;
  }
  FAIL("missing policy " << policy);
  return all.front();
}

} // namespace

TEST_CASE("full forward remat skips a backward right after its forward and meets the all-remat "
          "oracle") {
  // docs/oracles.md, "Bounds at small caps": 1F1B p = 2, m = 4, F = B = 1, K = 1, early timing:
  // makespan 12.
  ScenarioInput input = uniform_input(2, 4, {1, 1}, {1, 1}, {0, 1});
  input.cap_activations = 1;
  const std::vector<RematOutcome> all = baselines_of(input);
  const RematOutcome &full = outcome(all, "full");
  CHECK(full.plan.forward_count() == 4);
  CHECK(full.plan.at(1, 0).forward == ForwardRemat::none);
  CHECK(full.scenario.time_scale.to_units(full.simulation.metrics.makespan) == 12);
  CHECK(full.simulation.metrics.feasible);
  CHECK_FALSE(outcome(all, "none").simulation.metrics.feasible);
}

TEST_CASE("issue_27 full remat recomputes wherever something runs between a forward and its "
          "backward: the V turn's device, every microbatch but the adjacent ones") {
  // ZB-V places stages p-1 and p on the last device; they hold several microbatches, so skipping
  // that device (as before) left it over a cap the others met.
  ScenarioInput input = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  input.schedule = "zb-v";
  input.chunks = 2;
  const ScheduleInfo &info = find_schedule(input.schedule);
  const Scenario scenario = build_scenario(input, info);
  const Schedule base = generate_schedule(info, scenario, {});
  const RematPlan plan = full_forward_plan(scenario, base);
  int skipped = 0;
  for (const std::vector<Op> &ops : base.device_ops) {
    for (std::size_t k = 0; k < ops.size(); ++k) {
      const OpRef &op = ops[k].first;
      if (op.kind != OpKind::forward)
        continue;
      const bool adjacent = k + 1 < ops.size() && ops[k + 1].first.stage == op.stage &&
                            ops[k + 1].first.microbatch == op.microbatch &&
                            ops[k + 1].first.kind != OpKind::forward;
      CHECK((plan.at(op.stage, op.microbatch).forward == ForwardRemat::none) == adjacent);
      skipped += adjacent;
    }
  }
  CHECK(plan.forward_count() == scenario.stage_count() * scenario.microbatches - skipped);
  // Stages 3 and 4 (the last device) recompute at least some microbatches.
  int on_turn = 0;
  for (int j = 0; j < scenario.microbatches; ++j)
    on_turn += (plan.at(3, j).forward == ForwardRemat::full) + (plan.at(4, j).forward == ForwardRemat::full);
  CHECK(on_turn > 0);
}

TEST_CASE("selective remat drops the attention share at a fraction of the forward cost") {
  const SelectiveOptions gpt3;
  CHECK(gpt3.memory_fraction() == doctest::Approx(80.0 / 114)); // 5as/h = 80 for GPT-3
  CHECK(gpt3.time_fraction() == Rational{1, 37});               // 2048 / (6*12288 + 2048)
  ScenarioInput input = uniform_input(2, 2, {37, 1}, {37, 1}, {0, 1});
  input.cap_activations = 2;
  const std::vector<RematOutcome> all = baselines_of(input);
  const RematOutcome &selective = outcome(all, "selective");
  const Scenario &scenario = selective.scenario;
  CHECK(scenario.time_scale.to_units(scenario.stage_costs[0].recompute_forward) == 1);
  // Device 0 keeps 34/114 of two activations and rebuilds 80/114 of one during R(0,0).
  CHECK(selective.simulation.metrics.devices[0].peak_activations ==
        doctest::Approx(2 * 34.0 / 114 + 80.0 / 114));
  CHECK(selective.plan.forward_count() == 4);
}

TEST_CASE("greedy fits the budget and never beats the ILP") {
  for (const double k : {2.0, 3.0, 4.0}) {
    CAPTURE(k);
    ScenarioInput input = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
    input.schedule = "zb-h2";
    input.cap_activations = k;
    const ScheduleInfo &info = find_schedule("zb-h2");
    const Scenario scenario = build_scenario(input, info);
    const Schedule base = generate_schedule(info, scenario, {});
    const std::optional<RematPlan> greedy = greedy_plan(scenario, base);
    REQUIRE(greedy);
    const Simulation run = simulate(scenario, apply_plan(base, *greedy));
    CHECK(run.metrics.feasible);
    CHECK(greedy->recompute_count() > 0);
    const RematSolution ilp = solve_stage_remat(scenario, base, {60, 0});
    CHECK(ilp.simulation.metrics.max_span <= run.metrics.max_span);
  }
}

TEST_CASE("greedy reports when no option helps") {
  ScenarioInput input = uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1});
  input.cap_activations = 0.5;
  const std::vector<RematOutcome> all = baselines_of(input);
  const RematOutcome &greedy = outcome(all, "greedy");
  CHECK_FALSE(greedy.found);
  CHECK(greedy.note == "no single option reduces the excess memory");
}

TEST_CASE("issue_28 the greedy keeps the faster of its two tie rules, which differ on the V and "
          "on interleaved orders") {
  // Equal costs make most scores tie. On the V a device's second chunk runs its backward soon
  // after its forward, so recomputing the latest (s,j) frees memory only briefly: ties by the
  // saving's length recompute fewer. On interleaved 1F1B at m = p the latest (s,j) wins.
  const auto span_of = [](const Scenario &scenario, const Schedule &base,
                          const std::optional<RematPlan> &plan) {
    REQUIRE(plan);
    const Simulation run = simulate(scenario, apply_plan(base, *plan));
    CHECK(run.metrics.feasible);
    return scenario.time_scale.to_units(run.metrics.max_span);
  };
  struct Case {
    std::string schedule;
    int microbatches;
    double latest_pair, longest_saving;
  };
  // (`ppsim remat -p 4 -m 8 --F 1 --B 1 --W 1 --K 3 --schedule zb-v` prints half these spans:
  // its --F is a device's forward, split over the device's two chunks; here a chunk's is 1.)
  for (const Case &c : {Case{"zb-v", 8, 59, 55}, Case{"interleaved-1f1b", 4, 33, 35}}) {
    CAPTURE(c.schedule);
    ScenarioInput input = uniform_input(4, c.microbatches, {1, 1}, {1, 1}, {1, 1});
    input.schedule = c.schedule;
    input.chunks = 2;
    input.cap_activations = 3;
    const ScheduleInfo &info = find_schedule(input.schedule);
    const Scenario scenario = build_scenario(input, info);
    const Schedule base = generate_schedule(info, scenario, {});
    CHECK(span_of(scenario, base, greedy_plan(scenario, base, GreedyTies::latest_pair)) ==
          c.latest_pair);
    CHECK(span_of(scenario, base, greedy_plan(scenario, base, GreedyTies::longest_saving)) ==
          c.longest_saving);
    CHECK(span_of(scenario, base, greedy_plan(scenario, base)) ==
          std::min(c.latest_pair, c.longest_saving));
  }
}
