// The JSON cost file (docs/profiler.md, "The cost file"): layers, metadata, round trip and
// errors.
#include "costs/cost_file.h"

#include "tests/costs/cost_fixtures.h"

#include <doctest/doctest.h>
#include <string>
#include <vector>

using namespace ppsim;
using namespace ppsim::testing;

TEST_CASE("JSON round trip keeps rows, metadata and model level") {
  const CostFile original = sample_file();
  const std::string text = write_cost_json(original);
  CHECK(text.find("\"schema_version\": 1") != std::string::npos);
  CHECK(text.find("\"fwd_ms\": 1.5") != std::string::npos); // exact decimals are JSON numbers
  CHECK(text.find("\"bwd_input_ms_p10\": \"1/3\"") != std::string::npos);
  const CostFile parsed = parse_cost_json(text, "out.json");
  CHECK(parsed.rows == original.rows);
  CHECK(parsed.metadata == original.metadata);
  CHECK(parsed.optimizer_step_ms == 1.25);
}

TEST_CASE("JSON numbers are read as the exact decimals they print as") {
  const CostFile file = parse_cost_json(
      R"({"schema_version": 1, "layers": [{"layer_id": 0, "fwd_ms": 0.1, "bwd_input_ms": "0.2",
          "bwd_weight_ms": 3}]})",
      "layers.json");
  CHECK(file.rows[0].fwd_ms == Rational{1, 10});
  CHECK(file.rows[0].bwd_input_ms == Rational{1, 5});
  CHECK(file.rows[0].bwd_total_ms == Rational{16, 5});
}

TEST_CASE("a JSON number beyond a double is one error naming the file") {
  CHECK(json_error(
            R"({"schema_version": 1, "layers": [{"layer_id": 0, "fwd_ms": 1e400, "bwd_input_ms": 1,
                  "bwd_weight_ms": 1}]})") ==
        "layers.json: invalid JSON: number overflow parsing '1e400'");
}

TEST_CASE("JSON errors name the field path") {
  CHECK(json_error(R"({"schema_version": 1, "layers": [{"layer_id": 0, "fwd_ms": -2,
                  "bwd_input_ms": 1, "bwd_weight_ms": 1}]})") ==
        "layers.json: field 'layers[0].fwd_ms': expected a non-negative number, got \"-2\"");
  CHECK(json_error(R"({"schema_version": 1, "layers": [{"layer_id": 0, "fwd_ms": 1}]})") ==
        "layers.json: field 'layers[0]': missing field 'bwd_input_ms'");
  CHECK(json_error(R"({"layers": []})") == "layers.json: missing field 'schema_version'");
  CHECK(json_error(R"({"schema_version": 1, "layers": {}})") ==
        "layers.json: field 'layers': expected an array of layer objects");
  CHECK(json_error("{\"schema_version\": 1,\n \"layers\": [,]}") ==
        "layers.json:2: invalid JSON: syntax error while parsing value - unexpected ','; expected "
        "'[', '{', or a literal");
  CHECK(
      json_error(R"({"schema_version": 1, "layers": [{"layer_id": 0, "fwd_ms": 1, "bwd_input_ms": 1,
                  "bwd_weight_ms": 1, "fwd_msec": 1}]})") ==
      "layers.json: field 'layers[0]': unknown column 'fwd_msec', did you mean 'fwd_ms'?");
}

TEST_CASE("a JSON null is an absent value, as an empty CSV cell") {
  // Like a missing key.
  CHECK(json_error(
            R"({"schema_version": 1, "layers": [{"layer_id": 0, "fwd_ms": 1, "bwd_input_ms": null,
                  "bwd_weight_ms": 1}]})") ==
        "layers.json: field 'layers[0]': missing field 'bwd_input_ms'");
  const CostFile json = parse_cost_json(
      R"({"schema_version": 1, "layers": [{"layer_id": 0, "fwd_ms": 1, "bwd_input_ms": 1, "bwd_weight_ms": 1,
          "bwd_total_ms": 3}, {"layer_id": 1, "fwd_ms": 1, "bwd_input_ms": 1, "bwd_weight_ms": 1,
          "bwd_total_ms": null}]})",
      "layers.json");
  CHECK(json.rows[1].bwd_total_ms == Rational{2, 1});
  CHECK(json.rows[1].absent_columns == std::vector<std::string>{"bwd_total_ms"});
  CHECK(write_cost_csv(json).find("\n1,1,1,1,1,\n") != std::string::npos);
}

TEST_CASE("a deeply nested JSON value is named by its kind, never serialised") {
  // A schema_version nested 100 000 arrays deep once overflowed the stack in the message's dump.
  const std::string nested = std::string(100'000, '[') + std::string(100'000, ']');
  CHECK(json_error("{\"schema_version\": " + nested + ", \"layers\": []}") ==
        "layers.json: field 'schema_version': expected an integer, got an array");
  CHECK(json_error(R"({"schema_version": 1, "layers": [{"layer_id": 0, "fwd_ms": {"a": 1}}]})") ==
        "layers.json: field 'layers[0].fwd_ms': expected a number or name, got an object");
  CHECK(json_error(R"({"schema_version": ")" + std::string(1000, 'v') + R"("})") ==
        "layers.json: field 'schema_version': expected an integer, got \"" +
            std::string(79, 'v') + "...");
}

