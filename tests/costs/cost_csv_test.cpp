// The CSV cost file (docs/profiler.md, "The cost file"): header, cells, round trip and errors.
#include "costs/cost_file.h"

#include "tests/costs/cost_fixtures.h"

#include <doctest/doctest.h>
#include <string>
#include <vector>

using namespace ppsim;
using namespace ppsim::testing;

TEST_CASE("CSV round trip: write then parse gives the same rows") {
  const CostFile original = sample_file();
  const std::string text = write_cost_csv(original);
  CHECK(text.rfind("schema_version,layer_id,layer_name,layer_type,fwd_ms,", 0) == 0);
  CHECK(text.find(",1/3,") != std::string::npos);
  const CostFile parsed = parse_cost_csv(text, "out.csv");
  CHECK(parsed.rows == original.rows);
}

TEST_CASE("CSV header and row shape errors name file and line") {
  check_errors([](const std::string &text) { parse_cost_csv(text, "layers.csv"); },
               {{"schema_version,layer_id,fwd_ms,bwd_input_ms\n",
                 "layers.csv:1: missing column 'bwd_weight_ms'"},
                {"schema_version,layer_id,fwd_sm,bwd_input_ms,bwd_weight_ms\n",
                 "layers.csv:1: unknown column 'fwd_sm', did you mean 'fwd_ms'?"},
                {"schema_version,layer_id,forward,bwd_input_ms,bwd_weight_ms\n",
                 "layers.csv:1: unknown column 'forward'"},
                {"schema_version,layer_id,fwd_ms,fwd_ms,bwd_input_ms,bwd_weight_ms\n",
                 "layers.csv:1: duplicate column 'fwd_ms'"},
                {with_required_columns("1,0,1,1\n"), "layers.csv:2: expected 5 fields, got 4"}});
}

TEST_CASE("CSV comments, blank lines and CRLF are accepted") {
  const CostFile file = parse_cost_csv(
      "# measured on a laptop\r\nschema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms\r\n\r\n"
      "1, 0, 1, 2, 3\r\n",
      "layers.csv");
  REQUIRE(file.rows.size() == 1);
  CHECK(file.rows[0].bwd_weight_ms == Rational{3, 1});
}

TEST_CASE("an empty cell is an absent value: the default where a column may be missing, an error "
          "where not") {
  // bwd_total_ms and recompute_ms empty in layer 1: BW = B + W and R = F, as for missing columns.
  const CostFile file = parse_cost_csv("schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms,"
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
  CHECK(write_cost_csv(file).find("\n1,1,,1,2,3,,\n") != std::string::npos);
  // A required value: one line naming the line and column.
  CHECK(csv_error(with_required_columns("1,0,1,,3\n")) ==
        "layers.csv:2: field 'bwd_input_ms': layer 0 has no value (an empty cell: not measured); a "
        "simulation "
        "needs one");
  CHECK(csv_error(with_required_columns("1,,1,2,3\n")) ==
        "layers.csv:2: field 'layer_id': expected a non-negative integer, got \"\"");
}

TEST_CASE("issue_32 cost CSV: a huge cell is echoed cut, with its length") {
  CHECK(csv_error(with_required_columns("1," + std::string(5000, 'x') + ",1,2,3\n")) ==
        "layers.csv:2: field 'layer_id': expected a non-negative integer, got \"" +
            std::string(80, 'x') + "... (5000 characters)\"");
}

TEST_CASE("issue_30 a file with the whole backward only: B is the backward, W is 0, and it says so") {
  const CostFile fused = parse_cost_csv(
      "schema_version,layer_id,fwd_ms,bwd_total_ms\n1,0,0.5,1.25\n1,1,0.75,1.5\n", "noshapes.csv");
  CHECK(fused.fused_only());
  CHECK(fused.has_column("bwd_total_ms"));
  CHECK_FALSE(fused.has_column("bwd_weight_ms"));
  CHECK_FALSE(fused.has_column("activation_bytes_full"));
  CHECK(CostFile{}.has_column("activation_bytes_full")); // built in memory: every column
  CHECK(fused.rows[1].bwd_input_ms == Rational{3, 2});
  CHECK(fused.rows[1].bwd_weight_ms == Rational{0, 1});
  CHECK(fused.rows[1].bwd_total_ms == Rational{3, 2});
  // Written back, it stays a whole-backward file.
  CHECK(write_cost_csv(fused).rfind("schema_version,layer_id,fwd_ms,bwd_total_ms\n", 0) == 0);
  CHECK(parse_cost_csv(write_cost_csv(fused), "again.csv").fused_only());
  CHECK_FALSE(parse_cost_csv(with_required_columns("1,0,1,2,3\n"), "split.csv").fused_only());
  // One of B and W beside the total is a file missing the other.
  check_errors([](const std::string &text) { parse_cost_csv(text, "layers.csv"); },
               {{"schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_total_ms\n1,0,1,1,2\n",
                 "layers.csv:1: missing column 'bwd_weight_ms'"},
                {"schema_version,layer_id,fwd_ms\n1,0,1\n",
                 "layers.csv:1: missing column 'bwd_input_ms'"},
                // There the whole backward is what a layer's backward is: an empty cell is none.
                {"schema_version,layer_id,fwd_ms,bwd_total_ms\n1,0,1,2\n1,1,1,\n",
                 "layers.csv:3: field 'bwd_total_ms': layer 1 has no value (an empty cell: not "
                 "measured); a simulation needs one"}});
  // JSON: every layer splits its backward or none does.
  CHECK_THROWS_WITH(parse_cost_json(R"({"schema_version": 1, "layers": [)"
                                    R"({"layer_id": 0, "fwd_ms": 1, "bwd_input_ms": 1, "bwd_weight_ms": 1},)"
                                    R"({"layer_id": 1, "fwd_ms": 1, "bwd_total_ms": 2}]})",
                                    "mixed.json"),
                    "mixed.json: field 'layers[1]': has bwd_total_ms but no bwd_input_ms or "
                    "bwd_weight_ms, which other layers have: give the B/W split for every layer "
                    "or for none");
  CHECK(parse_cost_json(R"({"schema_version": 1, "layers": [)"
                        R"({"layer_id": 0, "fwd_ms": 1, "bwd_total_ms": 2}]})",
                        "fused.json")
            .fused_only());
}
