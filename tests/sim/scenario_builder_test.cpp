// Building the engine's Scenario from user input: placements, exact ticks, cost units, errors.
#include "base/index.h"
#include "sim/scenario_builder.h"

#include "base/error.h"
#include "run/prepare.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

using namespace ppsim;
using ppsim::testing::uniform_input;

TEST_CASE("per-device costs are split exactly over v chunks") {
  // cost_unit = "device": a full-stage F of 1 over v = 6 chunks is 1/6 per chunk, exactly.
  ScenarioInput input = uniform_input(2, 2, {1, 1}, {1, 1}, {0, 1});
  input.costs_per_device = true;
  const std::vector<int> placement{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1};
  const Scenario scenario = build_scenario_on(input, placement, 6, 1);
  CHECK(scenario.time_scale.exact);
  Ticks six{};
  for (int k = 0; k < 6; ++k)
    six += scenario.stage_costs[ppsim::at(2 * k)].forward;
  CHECK(six == scenario.time_scale.to_ticks({1, 1}));
  // Count unit: each chunk is 1/v of the device's share.
  CHECK(scenario.activations.stages[0].stored == doctest::Approx(1.0 / 6));
}

TEST_CASE("recompute costs default to F, F and F + B") {
  const Scenario scenario =
      build_scenario(uniform_input(2, 2, {1, 1}, {2, 1}, {3, 1}), find_schedule("1f1b"));
  const StageCosts &costs = scenario.stage_costs[0];
  CHECK(costs.recompute_forward == costs.forward);
  CHECK(costs.recompute_weight_inputs == costs.forward);
  CHECK(costs.recompute_full_backward == costs.forward + costs.backward_input);
}

TEST_CASE("impossible values name the field where they were written") {
  ScenarioInput input = uniform_input(0, 2, {1, 1}, {1, 1}, {0, 1});
  input.origins["cluster.devices"] = SourceLocation{"s.toml", 3, "cluster.devices"};
  CHECK_THROWS_WITH_AS(build_scenario(input, find_schedule("1f1b")),
                       "s.toml:3: field 'cluster.devices': expected at least 1 device, got 0",
                       Error);
  input = uniform_input(2, 2, {1, 1}, {1, 1}, {0, 1});
  input.forward = {{1, 1}, {2, 1}, {3, 1}};
  CHECK_THROWS_WITH_AS(build_scenario(input, find_schedule("1f1b")),
                       "field 'model.F': expected 1 or 2 values (one per stage), got 3", Error);
  input = uniform_input(2, 2, {1, 1}, {1, 1}, {0, 1});
  input.chunks = 2;
  CHECK_THROWS_WITH_AS(
      build_scenario(input, find_schedule("1f1b")),
      "field 'pipeline.chunks': schedule '1f1b' places one stage per device and pipe, so v "
      "must be 1, got 2",
      Error);
  input = uniform_input(2, 2, {1, 1}, {1, 1}, {0, 1});
  input.budget_bytes = 1e9;
  CHECK_THROWS_WITH_AS(
      build_scenario(input, find_schedule("1f1b")),
      "field 'cluster.memory': a byte budget needs byte sizes (model.memory.act_bytes)", Error);
}

TEST_CASE(
    "times whose serial sum leaves 2^62 ticks are refused where they enter, naming the field") {
  // p = 2, m = 2 with F = B = x, W = 0 (so R = x, RBW = 2x): 2 stages x 2 microbatches x 5x
  // ticks of 1 ms in all, which must stay below 2^62.
  const std::int64_t limit = std::int64_t{1} << 62;
  const std::int64_t x = limit / 20 - 1;
  ScenarioInput input = uniform_input(2, 2, {x, 1}, {x, 1}, {0, 1});
  CHECK_NOTHROW(build_scenario(input, find_schedule("1f1b")));
  input = uniform_input(2, 2, {x + 2, 1}, {x + 2, 1}, {0, 1});
  CHECK_THROWS_AS(build_scenario(input, find_schedule("1f1b")), Error);
  input = uniform_input(2, 2, {limit / 8, 1}, {1, 1}, {0, 1});
  input.origins["model.F"] = SourceLocation{"", 0, "--F"};
  CHECK_THROWS_WITH_AS(
      build_scenario(input, find_schedule("1f1b")),
      "field '--F': every op of every microbatch one after the other would exceed the 2^62 "
      "ticks ppsim times in exactly (1 ticks per ms); use smaller values or a coarser "
      "model.time_unit",
      Error);
  // A link latency that alone overflows 64 bits in ticks.
  input = uniform_input(2, 2, {1, 1000}, {1, 1}, {0, 1});
  input.latency = {INT64_MAX / 2, 1};
  CHECK_THROWS_WITH(
      build_scenario(input, find_schedule("1f1b")),
      doctest::Contains("field 'cluster.link.latency': every op of every microbatch"));
}

TEST_CASE("a run too large to hold is refused before anything is allocated") {
  ScenarioInput input = uniform_input(100000, 100000, {1, 1}, {1, 1}, {0, 1});
  input.origins["pipeline.microbatches"] = SourceLocation{"", 0, "-m"};
  CHECK_THROWS_WITH_AS(
      build_scenario(input, find_schedule("1f1b")),
      "field '-m': 100000 stages x 100000 microbatches make about 30000000000 ops, above "
      "ppsim's limit of 67108864 (about 150 bytes each)",
      Error);
  // The largest that fits: stages x m x 3 = 2^26 at most.
  CHECK_NOTHROW(check_run_size(input, 1 << 12, (1 << 14) / 3));
  CHECK_THROWS_AS(check_run_size(input, 1 << 12, (1 << 14) / 3 + 1), Error);
  // A schedule file naming microbatch 2e9 says so in one line, naming the cell.
  const std::string path = (std::filesystem::temp_directory_path() / "ppsim_huge_m.csv").string();
  std::ofstream(path) << "0F0,0F2000000000,0B0\n1F0,1B0\n";
  RunInput imported;
  imported.schedule_file = path;
  CHECK_THROWS_WITH(
      prepare_run(imported),
      doctest::Contains((path + ":1: action '0F2000000000' sets m = 2000000001 (1 + the largest "
                                "microbatch id): 2 stages x 2000000001 microbatches")
                            .c_str()));
  std::filesystem::remove(path);
}

TEST_CASE("a byte budget becomes a count cap K for the strictest device") {
  // K = (bytes - 2 params) / act: device 0 holds 2x10 bytes of parameters, act 100 per stage.
  ScenarioInput input = uniform_input(2, 4, {1, 1}, {1, 1}, {0, 1});
  input.bytes.activation = {100};
  input.bytes.parameters = {10, 50};
  input.budget_bytes = 420;
  const Scenario scenario = build_scenario(input, find_schedule("1f1b"));
  REQUIRE(scenario.activations.cap.has_value());
  CHECK(*scenario.activations.cap == doctest::Approx(3.2)); // device 1: (420 - 100) / 100
}
