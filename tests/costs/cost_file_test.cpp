// The cost file's schema (docs/profiler.md, "The cost file"): defaults, the rules of each
// column, exact decimals, merging rank files.
#include "costs/cost_file.h"

#include "tests/costs/cost_fixtures.h"

#include <doctest/doctest.h>
#include <string>
#include <vector>

using namespace ppsim;
using namespace ppsim::testing;

TEST_CASE("format_rational prints exact decimals and falls back to fractions") {
  CHECK(format_rational({3, 2}) == "1.5");
  CHECK(format_rational({1, 1000000}) == "0.000001");
  CHECK(format_rational({-5, 4}) == "-1.25");
  CHECK(format_rational({12, 4}) == "3");
  CHECK(format_rational({0, 7}) == "0");
  CHECK(format_rational({1, 3}) == "1/3");
}

TEST_CASE("a minimal CSV gets the documented defaults") {
  const CostFile file = parse_cost_csv(kMinimal, "layers.csv");
  REQUIRE(file.rows.size() == 2);
  const CostRow &row = file.rows[1];
  CHECK(row.layer_name == "block1");
  CHECK(row.layer_type == "gpt_block");
  CHECK(row.source == "synthetic");
  CHECK(row.fwd_ms == Rational{1, 4});
  CHECK(row.bwd_weight_ms == Rational{1, 3});
  CHECK(row.bwd_total_ms == Rational{5, 6}); // B + W
  CHECK(row.recompute_ms == Rational{1, 4}); // R = F
  CHECK(row.fwd_ms_p10 == Rational{1, 4});
  CHECK(row.bwd_weight_ms_p90 == Rational{1, 3});
  CHECK(row.activation_bytes_full == 0);
}

TEST_CASE("a value that breaks its column's rule names file, line and field") {
  CHECK(csv_error(with_required_columns("1,0,-1,1,1\n")) ==
        "layers.csv:2: field 'fwd_ms': expected a non-negative number, got \"-1\"");
  CHECK(csv_error(with_required_columns("2,0,1,1,1\n")) ==
        "layers.csv:2: field 'schema_version': unsupported schema version 2 (this ppsim reads "
        "version 1)");
  CHECK(csv_error(with_required_columns("1,1,1,1,1\n")) ==
        "layers.csv:2: field 'layer_id': expected layer id 0 (rows in layer order from 0), got 1");
  CHECK(csv_error(with_required_columns("1,0,1,1,1,lots\n", ",input_bytes")) ==
        "layers.csv:2: field 'input_bytes': expected a non-negative number of bytes, got \"lots\"");
  CHECK(csv_error(with_required_columns("1,0,1,1,1,1.5\n", ",fwd_flops")) ==
        "layers.csv:2: field 'fwd_flops': expected a non-negative integer, got \"1.5\"");
  CHECK(csv_error(with_required_columns("1,0,1,1,1,guess\n", ",source")) ==
        "layers.csv:2: field 'source': unknown source 'guess' (expected cupti, cuda_events, "
        "analytic, synthetic or nsys_import)");
  CHECK(csv_error(with_required_columns("")) == "layers.csv: the cost file has no layers");
}

TEST_CASE("read_cost_file picks the parser by extension and reports missing files") {
  CHECK_THROWS_WITH_AS(read_cost_file("/nonexistent/costs.csv"),
                       "/nonexistent/costs.csv: cannot open the cost file", Error);
}

TEST_CASE("rank files read for merge keep missing required columns absent, and so does the merge") {
  // Rank 0 marked F and BW only; rank 1 F, B and W.
  const std::string forward_backward =
      "schema_version,layer_id,fwd_ms,bwd_total_ms,source\n1,0,1,3,cupti\n";
  // As a model it measures the whole backward only (issue 30): fused schedules run on it.
  CHECK(csv_error(forward_backward) == "no error");
  const CostFile rank0 =
      parse_cost_csv(forward_backward, "rank0.csv", LayerIds::ascending, Required::absent_allowed);
  const CostFile rank1 =
      parse_cost_csv("schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms,source\n"
                     "1,1,1,2,1,cupti\n",
                     "rank1.csv", LayerIds::ascending, Required::absent_allowed);
  CHECK_THROWS_WITH(parse_cost_csv("schema_version,fwd_ms\n1,1\n", "x.csv", LayerIds::ascending,
                                   Required::absent_allowed),
                    "x.csv:1: missing column 'layer_id'");
  const CostFile merged = merge_cost_files({rank0, rank1});
  const std::string text = write_cost_csv(merged);
  CHECK(text == "schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms,bwd_total_ms,source\n"
                "1,0,1,,,3,cupti\n"
                "1,1,1,2,1,,cupti\n");
  // The simulator's reader refuses the merged file's empty B instead of running B = 0.
  CHECK_THROWS_WITH(
      parse_cost_csv(text, "merged.csv"),
      "merged.csv:2: field 'bwd_input_ms': layer 0 has no value (an empty cell: not measured); a "
      "simulation needs one");
  // Both ranks F and BW only: the merged file has no B column at all.
  const CostFile also_fb =
      parse_cost_csv("schema_version,layer_id,fwd_ms,bwd_total_ms,source\n1,1,2,4,cupti\n",
                     "rank1.csv", LayerIds::ascending, Required::absent_allowed);
  CHECK(write_cost_csv(merge_cost_files({rank0, also_fb})) ==
        "schema_version,layer_id,fwd_ms,bwd_total_ms,source\n1,0,1,3,cupti\n1,1,2,4,cupti\n");
}

TEST_CASE("issue_17 numbers out of range say so, with the limit") {
  CHECK(
      csv_error(with_required_columns("1,0,1e300,1,1\n")) ==
      "layers.csv:2: field 'fwd_ms': \"1e300\" is out of range: times are read exactly, at most 18 "
      "significant digits from 1e-18 to about 9.2e18 ms");
  CHECK(csv_error(with_required_columns("1,0,1,1,1,1e31\n", ",input_bytes")) ==
        "layers.csv:2: field 'input_bytes': \"1e31\" bytes is out of range: at most 2^44 (16 TiB)");
  // 1e19 once passed and wrapped past 2^63 in the checkpoint chains (a smaller peak than 1 byte's).
  CHECK(csv_error(with_required_columns("1,0,1,1,1,1e19\n", ",activation_bytes_full")) ==
        "layers.csv:2: field 'activation_bytes_full': \"1e19\" bytes is out of range: at most "
        "2^44 (16 TiB)");
  CHECK(
      json_error(R"({"schema_version": 1, "layers": [{"layer_id": 0, "fwd_ms": 1, "bwd_input_ms": 1,
                  "bwd_weight_ms": 1, "activation_bytes_full": 1e300}]})") ==
      "layers.json: field 'layers[0].activation_bytes_full': \"1e+300\" bytes "
      "is out of range: at most 2^44 (16 TiB)");
  CHECK(json_error(
            R"({"schema_version": 1, "layers": [{"layer_id": 0, "fwd_ms": 1e300, "bwd_input_ms": 1,
                  "bwd_weight_ms": 1}]})") ==
        "layers.json: field 'layers[0].fwd_ms': \"1e+300\" is out of range: times are "
        "read exactly, at most 18 "
        "significant digits from 1e-18 to about 9.2e18 ms");
}
