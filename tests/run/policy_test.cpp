// `--remat POLICY` of ppsim simulate (docs/model.md, "Command line and JSON", docs/remat.md,
// "Simple policies").
#include "run/policy.h"

#include "base/error.h"
#include "base/index.h"
#include "remat/baselines.h"
#include "tests/sim/test_support.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <random>

using namespace ppsim;
using ppsim::testing::uniform_input;

namespace {

struct Base {
  RunInput input;
  Scenario scenario;
  Schedule schedule;
};

Base base(const std::string &name, double k) {
  RunInput input = uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1});
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
  const RematPlan plan = plan_of(selective.schedule, 2, 2);
  CHECK(plan.forward_count() == 4);
  // Measured, it is a level of every stage (docs/remat.md, "Checkpoint levels"): a plan file
  // writes it as such.
  CHECK(selective.scenario.selective_levels() == std::vector<int>{1, 1});
  CHECK(plan.checkpoint_level_count() == 4);
  CHECK(format_plan_csv(plan, selective.scenario.selective_levels()).ends_with("1,1,selective,none\n"));
  CHECK(selective.scenario.stage_costs[0].checkpoint_level_recompute.at(0) ==
        selective.scenario.time_scale.to_ticks({1, 4}));
  CHECK(selective.scenario.bytes->stages[0].checkpoint_levels.at(0).kept == 75);
  // Device 0 keeps 75 for F(0,0) and for F(0,1); R(0,0) turns its 75 back into the whole 100.
  const Simulation run = simulate(selective.scenario, selective.schedule);
  CHECK(run.metrics.devices[0].peak_bytes == 75 + 100);
}

TEST_CASE("issue_27 the ILP's plan is never slower than a uniform policy it contains") {
  // Random byte-model scenarios with measured selective recomputation and a budget below what
  // the schedule holds without recomputation: the ILP chooses none, full or selective (a level,
  // docs/remat.md, "Checkpoint levels") per (s,j), so it is at least as fast as each of them
  // applied everywhere, whatever the solver's gap.
  std::mt19937 rng(27);
  const auto draw = [&](int low, int high) {
    return std::uniform_int_distribution<int>(low, high)(rng);
  };
  int binding = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const std::string name = std::vector<std::string>{"1f1b", "zb-h1", "zb-v"}[trial % 3];
    const int p = draw(2, 4);
    const int stages = name == "zb-v" ? 2 * p : p;
    RunInput input = testing::drawn_stage_input(p, draw(p, 2 * p), stages, {0, 1}, 100,
                                                     [&] { return draw(50, 300); });
    input.schedule = name;
    testing::set_accounting_bytes(input, 0);
    input.recompute_selective = {{draw(5, 60), 100}};
    input.bytes.selective_activation = {static_cast<double>(draw(300, 900))};
    testing::Generated g = testing::generate(name, input);
    const double held = simulate(g.scenario, g.schedule).metrics.max_peak_bytes().value();
    input.budget_bytes = held * draw(40, 95) / 100.0;
    g = testing::generate(name, input);
    CAPTURE(trial);
    CAPTURE(name);
    CAPTURE(*input.budget_bytes);
    std::optional<Ticks> fastest_uniform;
    for (const std::string policy : {"none", "full", "selective"}) {
      const PolicyRun run = apply_remat_policy(input, g.scenario, g.schedule, policy);
      const Simulation replay = simulate(run.scenario, run.schedule);
      if (replay.metrics.feasible &&
          (!fastest_uniform || replay.metrics.max_span < *fastest_uniform))
        fastest_uniform = replay.metrics.max_span;
    }
    if (!fastest_uniform)
      continue;
    ++binding;
    const PolicyRun ilp = apply_remat_policy(input, g.scenario, g.schedule, "ilp", {30, 0.03});
    const Simulation replay = simulate(ilp.scenario, ilp.schedule);
    CHECK(replay.metrics.feasible);
    // One time scale: the selective level's R is a whole number of the scenario's ticks.
    CHECK(ilp.scenario.time_scale.ticks_per_unit == g.scenario.time_scale.ticks_per_unit);
    CHECK(replay.metrics.max_span <= *fastest_uniform);
  }
  CHECK(binding >= 12);
}

TEST_CASE("issue_27 measured selective recomputation as a level replays as the selective policy") {
  // The level (with_selective_level, selective_level_plan) and the scenario of the fractions
  // (selective_scenario with selective_plan) give the same times and the same memory, device by
  // device, in both tracks.
  std::mt19937 rng(2027);
  const auto draw = [&](int low, int high) {
    return std::uniform_int_distribution<int>(low, high)(rng);
  };
  for (int trial = 0; trial < 12; ++trial) {
    const std::string name = std::vector<std::string>{"1f1b", "zb-h2", "1f1b-split"}[trial % 3];
    const int p = draw(2, 4);
    RunInput input = testing::drawn_stage_input(p, draw(p, 2 * p), p, {1, 10}, 100,
                                                     [&] { return draw(50, 300); });
    testing::set_accounting_bytes(input, 1e9);
    input.recompute_selective = {{draw(5, 60), 100}};
    input.bytes.selective_activation = {static_cast<double>(draw(300, 900))};
    const testing::Generated g = testing::generate(name, input);
    const Scenario leveled = with_selective_level(input, g.scenario);
    const Simulation as_level =
        simulate(leveled, apply_plan(g.schedule, selective_level_plan(leveled).value()));
    const Scenario fractions = selective_scenario(input, g.scenario, {});
    const Simulation as_policy = simulate(fractions, apply_plan(g.schedule, selective_plan(fractions)));
    CAPTURE(trial);
    CHECK(leveled.time_scale.exact_units(as_level.metrics.makespan) ==
          fractions.time_scale.exact_units(as_policy.metrics.makespan));
    for (int d = 0; d < p; ++d) {
      CAPTURE(d);
      CHECK(as_level.metrics.devices[ppsim::at(d)].peak_bytes ==
            as_policy.metrics.devices[ppsim::at(d)].peak_bytes);
      CHECK(as_level.metrics.devices[ppsim::at(d)].peak_activations ==
            doctest::Approx(as_policy.metrics.devices[ppsim::at(d)].peak_activations));
    }
  }
}

TEST_CASE("issue_27 selective recomputation a cost file does not measure is no free option") {
  // A cost file without recompute_selective_ms and activation_bytes_selective fills zeros: as a
  // level that would cost nothing and keep nothing. Neither the level nor the policy exists then.
  Base b = base("1f1b", 1);
  b.input.recompute_selective = {{0, 1}};
  b.input.bytes.activation = {100};
  b.input.bytes.selective_activation = {0};
  b.input.costs_files = {"imported.csv"};
  CHECK_FALSE(b.input.measures_selective());
  CHECK_FALSE(with_selective_level(b.input, b.scenario).has_selective_level());
  CHECK_THROWS_WITH_AS(with_policy(b, "selective"),
                       "the costs of imported.csv measure no selective recomputation "
                       "(recompute_selective_ms, activation_bytes_selective)",
                       Error);
  // Measured R alone is not enough either: what F keeps is part of the measurement.
  b.input.recompute_selective = {{1, 4}};
  CHECK_FALSE(b.input.measures_selective());
  b.input.bytes.selective_activation = {75};
  CHECK(b.input.measures_selective());
  CHECK(with_selective_level(b.input, b.scenario).has_selective_level());
}
