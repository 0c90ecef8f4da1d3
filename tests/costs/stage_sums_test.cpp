// Stage sums of a cost file (docs/profiler.md, "The cost file"): exact time sums, byte mapping,
// and partitions that do not cover the layers.
#include "costs/stage_sums.h"

#include "tests/costs/cost_fixtures.h"

#include <doctest/doctest.h>

using ppsim::CostFile;
using ppsim::Rational;
using ppsim::testing::kMinimal;
using ppsim::testing::sample_file;

TEST_CASE("aggregate_stages sums times exactly and maps bytes as docs/profiler.md says") {
  const CostFile file = sample_file();
  const auto stages = ppsim::aggregate_stages(file, {2, 1});
  REQUIRE(stages.size() == 2);
  const ppsim::StageCostSums &first = stages[0];
  CHECK(first.forward_ms == Rational{7, 2});              // 3/2 + 4/2
  CHECK(first.backward_input_ms == Rational{7, 2});       // 7/4 * 2
  CHECK(first.backward_weight_ms == Rational{1, 500000}); // 2 * 1e-6
  CHECK(first.backward_total_ms == Rational{4, 1});
  CHECK(first.recompute_ms == Rational{3, 1});
  CHECK(first.activation_bytes_full == 2 * 7079985152.0); // M_f = sum
  CHECK(first.bwd_w_stash_bytes == 50 + 51);              // M_b = sum
  CHECK(first.bwd_w_act_bytes == 20 + 21);                // M_ba = sum
  CHECK(first.input_bytes == 100);                        // M_in = first layer's input
  CHECK(first.output_bytes == 201);                       // M_out = last layer's output
  CHECK(first.param_bytes == 2e9);
  CHECK(first.optimizer_state_bytes == 6e9);
  CHECK(first.fwd_peak_temp_bytes == 20); // max, not sum
  CHECK(first.bwd_input_peak_temp_bytes == 30);
  CHECK(stages[1].forward_ms == Rational{5, 2});
  CHECK(stages[1].input_bytes == 102);
  CHECK(stages[1].output_bytes == 202);
}

TEST_CASE("stage sums are the same after a write and a read") {
  const CostFile file = sample_file();
  const auto direct = ppsim::aggregate_stages(file, {1, 2});
  CHECK(ppsim::aggregate_stages(ppsim::parse_cost_csv(ppsim::write_cost_csv(file), "a.csv"),
                                {1, 2}) == direct);
  CHECK(ppsim::aggregate_stages(ppsim::parse_cost_json(ppsim::write_cost_json(file), "a.json"),
                                {1, 2}) == direct);
}

TEST_CASE("aggregate_stages rejects partitions that do not cover the layers") {
  CostFile file = ppsim::parse_cost_csv(kMinimal, "layers.csv");
  const auto message = [&](const std::vector<int> &parts) {
    return ppsim::testing::error_message([&] { ppsim::aggregate_stages(file, parts); });
  };
  CHECK(message({1, 2}) ==
        "layers.csv: field 'layers_per_stage': the stages hold 3 layers but the cost file has 2");
  CHECK(message({2, 0}) == "layers.csv: field 'layers_per_stage': stage 1 has 0 layers; every "
                           "stage needs at least one");
  CHECK(message({}) ==
        "layers.csv: field 'layers_per_stage': the stages hold 0 layers but the cost file has 2");
}
