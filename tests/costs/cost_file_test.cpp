// Cost files (docs/profiler.md, "The cost file"): parse, write, round trip and errors.
#include "costs/cost_file.h"

#include "tests/costs/cost_fixtures.h"

#include "base/error.h"

#include <doctest/doctest.h>
#include <string>

using ppsim::CostFile;
using ppsim::CostRow;
using ppsim::Rational;
using ppsim::testing::full_row;
using ppsim::testing::kMinimal;
using ppsim::testing::sample_file;

namespace {

std::string error_of(const std::string &text, bool json = false) {
  try {
    if (json) {
      ppsim::parse_cost_json(text, "layers.json");
    } else {
      ppsim::parse_cost_csv(text, "layers.csv");
    }
  } catch (const ppsim::Error &error) {
    return error.what();
  }
  return "no error";
}

} // namespace

TEST_CASE("format_rational prints exact decimals and falls back to fractions") {
  CHECK(ppsim::format_rational({3, 2}) == "1.5");
  CHECK(ppsim::format_rational({1, 1000000}) == "0.000001");
  CHECK(ppsim::format_rational({-5, 4}) == "-1.25");
  CHECK(ppsim::format_rational({12, 4}) == "3");
  CHECK(ppsim::format_rational({0, 7}) == "0");
  CHECK(ppsim::format_rational({1, 3}) == "1/3");
}

TEST_CASE("a JSON number beyond a double is one error naming the file") {
  CHECK(error_of(
            R"({"schema_version": 1, "layers": [{"layer_id": 0, "fwd_ms": 1e400, "bwd_input_ms": 1,
                  "bwd_weight_ms": 1}]})",
            true) == "layers.json: invalid JSON: number overflow parsing '1e400'");
}

TEST_CASE("a minimal CSV gets the documented defaults") {
  const CostFile file = ppsim::parse_cost_csv(kMinimal, "layers.csv");
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

TEST_CASE("CSV round trip: write then parse gives the same rows") {
  const CostFile original = sample_file();
  const std::string text = ppsim::write_cost_csv(original);
  CHECK(text.rfind("schema_version,layer_id,layer_name,layer_type,fwd_ms,", 0) == 0);
  CHECK(text.find(",1/3,") != std::string::npos);
  const CostFile parsed = ppsim::parse_cost_csv(text, "out.csv");
  REQUIRE(parsed.rows.size() == original.rows.size());
  for (std::size_t i = 0; i < parsed.rows.size(); ++i) {
    CHECK(parsed.rows[i] == original.rows[i]);
  }
}

TEST_CASE("JSON round trip keeps rows, metadata and model level") {
  const CostFile original = sample_file();
  const std::string text = ppsim::write_cost_json(original);
  CHECK(text.find("\"schema_version\": 1") != std::string::npos);
  CHECK(text.find("\"fwd_ms\": 1.5") != std::string::npos); // exact decimals are JSON numbers
  CHECK(text.find("\"bwd_input_ms_p10\": \"1/3\"") != std::string::npos);
  const CostFile parsed = ppsim::parse_cost_json(text, "out.json");
  REQUIRE(parsed.rows.size() == original.rows.size());
  for (std::size_t i = 0; i < parsed.rows.size(); ++i) {
    CHECK(parsed.rows[i] == original.rows[i]);
  }
  CHECK(parsed.metadata == original.metadata);
  CHECK(parsed.optimizer_step_ms == 1.25);
}

TEST_CASE("JSON numbers are read as the exact decimals they print as") {
  const CostFile file = ppsim::parse_cost_json(
      R"({"schema_version": 1, "layers": [{"layer_id": 0, "fwd_ms": 0.1, "bwd_input_ms": "0.2",
          "bwd_weight_ms": 3}]})",
      "layers.json");
  CHECK(file.rows[0].fwd_ms == Rational{1, 10});
  CHECK(file.rows[0].bwd_input_ms == Rational{1, 5});
  CHECK(file.rows[0].bwd_total_ms == Rational{16, 5});
}

TEST_CASE("CSV errors name file, line and field") {
  CHECK(error_of("schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms\n1,0,-1,1,1\n") ==
        "layers.csv:2: field 'fwd_ms': expected a non-negative number, got \"-1\"");
  CHECK(error_of("schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms\n2,0,1,1,1\n") ==
        "layers.csv:2: field 'schema_version': unsupported schema version 2 (this ppsim reads "
        "version 1)");
  CHECK(error_of("schema_version,layer_id,fwd_ms,bwd_input_ms\n") ==
        "layers.csv:1: missing column 'bwd_weight_ms'");
  CHECK(error_of("schema_version,layer_id,fwd_sm,bwd_input_ms,bwd_weight_ms\n") ==
        "layers.csv:1: unknown column 'fwd_sm', did you mean 'fwd_ms'?");
  CHECK(error_of("schema_version,layer_id,forward,bwd_input_ms,bwd_weight_ms\n") ==
        "layers.csv:1: unknown column 'forward'");
  CHECK(error_of("schema_version,layer_id,fwd_ms,fwd_ms,bwd_input_ms,bwd_weight_ms\n") ==
        "layers.csv:1: duplicate column 'fwd_ms'");
  CHECK(error_of("schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms\n1,0,1,1\n") ==
        "layers.csv:2: expected 5 fields, got 4");
  CHECK(error_of("schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms\n1,1,1,1,1\n") ==
        "layers.csv:2: field 'layer_id': expected layer id 0 (rows in layer order from 0), got 1");
  CHECK(error_of("schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms,input_bytes\n"
                 "1,0,1,1,1,lots\n") ==
        "layers.csv:2: field 'input_bytes': expected a non-negative number of bytes, got \"lots\"");
  CHECK(error_of("schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms,fwd_flops\n"
                 "1,0,1,1,1,1.5\n") ==
        "layers.csv:2: field 'fwd_flops': expected a non-negative integer, got \"1.5\"");
  CHECK(error_of("schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms,source\n"
                 "1,0,1,1,1,guess\n") ==
        "layers.csv:2: field 'source': unknown source 'guess' (expected cupti, cuda_events, "
        "analytic, synthetic or nsys_import)");
  CHECK(error_of("schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms\n") ==
        "layers.csv: the cost file has no layers");
}

TEST_CASE("CSV comments, blank lines and CRLF are accepted") {
  const CostFile file = ppsim::parse_cost_csv(
      "# measured on a laptop\r\nschema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms\r\n\r\n"
      "1, 0, 1, 2, 3\r\n",
      "layers.csv");
  REQUIRE(file.rows.size() == 1);
  CHECK(file.rows[0].bwd_weight_ms == Rational{3, 1});
}

TEST_CASE("JSON errors name the field path") {
  CHECK(error_of(R"({"schema_version": 1, "layers": [{"layer_id": 0, "fwd_ms": -2,
                  "bwd_input_ms": 1, "bwd_weight_ms": 1}]})",
                 true) ==
        "layers.json: field 'layers[0].fwd_ms': expected a non-negative number, got \"-2\"");
  CHECK(error_of(R"({"schema_version": 1, "layers": [{"layer_id": 0, "fwd_ms": 1}]})", true) ==
        "layers.json: field 'layers[0]': missing field 'bwd_input_ms'");
  CHECK(error_of(R"({"layers": []})", true) == "layers.json: missing field 'schema_version'");
  CHECK(error_of(R"({"schema_version": 1, "layers": {}})", true) ==
        "layers.json: field 'layers': expected an array of layer objects");
  CHECK(error_of("{\"schema_version\": 1,\n \"layers\": [,]}", true) ==
        "layers.json:2: invalid JSON: syntax error while parsing value - unexpected ','; expected "
        "'[', '{', or a literal");
  CHECK(error_of(R"({"schema_version": 1, "layers": [{"layer_id": 0, "fwd_ms": 1, "bwd_input_ms": 1,
                  "bwd_weight_ms": 1, "fwd_msec": 1}]})",
                 true) ==
        "layers.json: field 'layers[0]': unknown column 'fwd_msec', did you mean 'fwd_ms'?");
}

TEST_CASE("read_cost_file picks the parser by extension and reports missing files") {
  CHECK_THROWS_WITH_AS(ppsim::read_cost_file("/nonexistent/costs.csv"),
                       "/nonexistent/costs.csv: cannot open the cost file", ppsim::Error);
}

TEST_CASE("an empty cell is an absent value: the default where a column may be missing, an error "
          "where not") {
  // bwd_total_ms and recompute_ms empty in layer 1: BW = B + W and R = F, as for missing columns.
  const CostFile file =
      ppsim::parse_cost_csv("schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms,"
                            "bwd_total_ms,recompute_ms,layer_name\n"
                            "1,0,1,2,3,4,5,first\n"
                            "1,1,1,2,3,,,\n",
                            "layers.csv");
  REQUIRE(file.rows.size() == 2);
  CHECK(file.rows[0].bwd_total_ms == Rational{4, 1});
  CHECK(file.rows[1].bwd_total_ms == Rational{5, 1});
  CHECK(file.rows[1].recompute_ms == Rational{1, 1});
  CHECK(file.rows[1].layer_name == "block1");
  CHECK(file.rows[1].absent_columns ==
        std::vector<std::string>{"bwd_total_ms", "recompute_ms", "layer_name"});
  // Written back, the cells stay empty (never the defaults, never 0).
  CHECK(ppsim::write_cost_csv(file).find("\n1,1,,1,2,3,,\n") != std::string::npos);
  // A required value: one line naming the line and column.
  CHECK(error_of("schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms\n1,0,1,,3\n") ==
        "layers.csv:2: field 'bwd_input_ms': layer 0 has no value (an empty cell: not measured); a "
        "simulation "
        "needs one");
  CHECK(error_of("schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms\n1,,1,2,3\n") ==
        "layers.csv:2: field 'layer_id': expected a non-negative integer, got \"\"");
  // JSON: null is absent, like a missing key.
  CHECK(error_of(
            R"({"schema_version": 1, "layers": [{"layer_id": 0, "fwd_ms": 1, "bwd_input_ms": null,
                  "bwd_weight_ms": 1}]})",
            true) == "layers.json: field 'layers[0]': missing field 'bwd_input_ms'");
  const CostFile json = ppsim::parse_cost_json(
      R"({"schema_version": 1, "layers": [{"layer_id": 0, "fwd_ms": 1, "bwd_input_ms": 1, "bwd_weight_ms": 1,
          "bwd_total_ms": 3}, {"layer_id": 1, "fwd_ms": 1, "bwd_input_ms": 1, "bwd_weight_ms": 1,
          "bwd_total_ms": null}]})",
      "layers.json");
  CHECK(json.rows[1].bwd_total_ms == Rational{2, 1});
  CHECK(json.rows[1].absent_columns == std::vector<std::string>{"bwd_total_ms"});
  CHECK(ppsim::write_cost_csv(json).find("\n1,1,1,1,1,\n") != std::string::npos);
}

TEST_CASE("rank files read for merge keep missing required columns absent, and so does the merge") {
  using ppsim::LayerIds;
  using ppsim::Required;
  // Rank 0 marked F and BW only; rank 1 F, B and W.
  const std::string forward_backward =
      "schema_version,layer_id,fwd_ms,bwd_total_ms,source\n1,0,1,3,cupti\n";
  CHECK(error_of(forward_backward) == "layers.csv:1: missing column 'bwd_input_ms'");
  const CostFile rank0 = ppsim::parse_cost_csv(forward_backward, "rank0.csv", LayerIds::ascending,
                                               Required::absent_allowed);
  const CostFile rank1 =
      ppsim::parse_cost_csv("schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms,source\n"
                            "1,1,1,2,1,cupti\n",
                            "rank1.csv", LayerIds::ascending, Required::absent_allowed);
  CHECK_THROWS_WITH(ppsim::parse_cost_csv("schema_version,fwd_ms\n1,1\n", "x.csv",
                                          LayerIds::ascending, Required::absent_allowed),
                    "x.csv:1: missing column 'layer_id'");
  const CostFile merged = ppsim::merge_cost_files({rank0, rank1});
  const std::string text = ppsim::write_cost_csv(merged);
  CHECK(text == "schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms,bwd_total_ms,source\n"
                "1,0,1,,,3,cupti\n"
                "1,1,1,2,1,,cupti\n");
  // The simulator's reader refuses the merged file's empty B instead of running B = 0.
  CHECK_THROWS_WITH(
      ppsim::parse_cost_csv(text, "merged.csv"),
      "merged.csv:2: field 'bwd_input_ms': layer 0 has no value (an empty cell: not measured); a "
      "simulation needs one");
  // Both ranks F and BW only: the merged file has no B column at all.
  const CostFile also_fb =
      ppsim::parse_cost_csv("schema_version,layer_id,fwd_ms,bwd_total_ms,source\n1,1,2,4,cupti\n",
                            "rank1.csv", LayerIds::ascending, Required::absent_allowed);
  CHECK(ppsim::write_cost_csv(ppsim::merge_cost_files({rank0, also_fb})) ==
        "schema_version,layer_id,fwd_ms,bwd_total_ms,source\n1,0,1,3,cupti\n1,1,2,4,cupti\n");
}

TEST_CASE("issue_17 numbers out of range say so, with the limit") {
  CHECK(
      error_of("schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms\n1,0,1e300,1,1\n") ==
      "layers.csv:2: field 'fwd_ms': \"1e300\" is out of range: times are read exactly, at most 18 "
      "significant digits from 1e-18 to about 9.2e18 ms");
  CHECK(error_of("schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms,input_bytes\n1,0,1,1,1,"
                 "1e31\n") ==
        "layers.csv:2: field 'input_bytes': \"1e31\" bytes is out of range: at most 1e30");
  CHECK(error_of(R"({"schema_version": 1, "layers": [{"layer_id": 0, "fwd_ms": 1, "bwd_input_ms": 1,
                  "bwd_weight_ms": 1, "activation_bytes_full": 1e300}]})",
                 true) == "layers.json: field 'layers[0].activation_bytes_full': \"1e+300\" bytes "
                          "is out of range: at most 1e30");
  CHECK(error_of(
            R"({"schema_version": 1, "layers": [{"layer_id": 0, "fwd_ms": 1e300, "bwd_input_ms": 1,
                  "bwd_weight_ms": 1}]})",
            true) == "layers.json: field 'layers[0].fwd_ms': \"1e+300\" is out of range: times are "
                     "read exactly, at most 18 "
                     "significant digits from 1e-18 to about 9.2e18 ms");
}
