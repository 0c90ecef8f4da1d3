// Scenario TOML (docs/scenario.md) and the one field setter shared with flags and sweeps.
#include "run/scenario_file.h"

#include "base/decimal.h"
#include "base/error.h"
#include "run/run_input.h"
#include "sim/schedules/registry.h"
#include "tests/base/error_support.h"

#include <doctest/doctest.h>

#include <cmath>

using namespace ppsim;

namespace {

std::string error_of(const std::string &text) {
  return testing::error_message([&] { parse_scenario(text, "s.toml"); });
}

} // namespace

TEST_CASE("every section is read, with exact durations") {
  const RunInput input = parse_scenario(R"(
[model]
name = "GPT 1.5B"
cost_unit = "device"
F = 0.1
B = "1/6"
W = [1, 2]
w_stash = 0.5
[model.memory]
act_bytes = "1.5GiB"
param_bytes = 1024
[cluster]
devices = 2
K = 3
memory_model = "bytes"
memory = "80GB"
[cluster.link]
latency = 0.25
bandwidth = "400Gb/s"
contention = true
[pipeline]
schedule = "zb-h1"
microbatches = 16
group_size = 2
[remat]
timing = "lumped"
)",
                                             "s.toml", "/scenarios");
  CHECK(input.model_name == "GPT 1.5B");
  CHECK(input.costs_per_device);
  CHECK(input.forward == std::vector<Rational>{{1, 10}});
  CHECK(input.backward_input == std::vector<Rational>{{1, 6}});
  CHECK(input.backward_weight == std::vector<Rational>{{1, 1}, {2, 1}});
  CHECK(input.w_stash == 0.5);
  CHECK(input.bytes.activation == std::vector<double>{1.5 * 1024 * 1024 * 1024});
  CHECK(input.bytes.parameters == std::vector<double>{1024});
  CHECK(input.devices == 2);
  CHECK(input.cap_activations == 3.0);
  CHECK(input.memory_model == MemoryModel::bytes);
  CHECK(input.budget_bytes == 80e9);
  CHECK(input.latency == Rational{1, 4});
  CHECK(input.bandwidth_bytes_per_second == 50e9);
  CHECK(input.contention);
  CHECK(input.schedule == "zb-h1");
  CHECK(input.microbatches == 16);
  CHECK(input.group_size == 2);
  CHECK(input.remat_timing == RematTiming::lumped);
  CHECK(input.locate("pipeline.microbatches").line == 23);
}

TEST_CASE("bad values name file, line and field") {
  CHECK(error_of("[cluster]\ndevices = 0\n") ==
        "s.toml:2: field 'cluster.devices': expected an integer >= 1, got 0");
  CHECK(error_of("[cluster]\ndevices = 2.5\n") ==
        "s.toml:2: field 'cluster.devices': expected an integer, got 2.5");
  CHECK(error_of("[model]\nF = \"fast\"\n") ==
        "s.toml:2: field 'model.F': expected a number, got \"fast\"");
  CHECK(error_of("[model]\nF = []\n") == "s.toml:2: field 'model.F': expected at least one value");
  CHECK(error_of("[model]\nw_stash = 2\n") ==
        "s.toml:2: field 'model.w_stash': expected a fraction in [0, 1], got 2");
  CHECK(error_of("[cluster]\nmemory_model = \"paged\"\n") ==
        "s.toml:2: field 'cluster.memory_model': expected one of count, zb, bytes, got \"paged\"");
  CHECK(error_of("[cluster.link]\nbandwidth = \"fast\"\n") ==
        "s.toml:2: field 'cluster.link.bandwidth': expected a bandwidth such as \"50GB/s\" or "
        "\"inf\", got \"fast\"");
  CHECK(error_of("[cluster.link]\ncontention = 1\n") ==
        "s.toml:2: field 'cluster.link.contention': expected true or false, got 1");
  CHECK(error_of("[pipline]\nschedule = \"1f1b\"\n") ==
        "s.toml:2: unknown field 'pipline.schedule', did you mean 'pipeline.schedule'?");
  CHECK(error_of("[model\nF = 1\n").rfind("s.toml:1: malformed TOML: ", 0) == 0);
  // issue_32: an unknown table without fields was accepted in silence; a known one is fine.
  CHECK(error_of("[pipeline]\n[modle]\n") ==
        "s.toml:2: unknown table 'modle', did you mean 'model'?");
  CHECK(error_of("[extras]\n") == "s.toml:1: unknown table 'extras'");
  CHECK_NOTHROW(parse_scenario("[model.memory]\n[cluster.link]\n", "s.toml", "."));
}

TEST_CASE("text values: TOML when they are TOML, else strings") {
  RunInput input;
  set_scenario_field_from_text(input, "model.F", "[1, 2, 3]", {"", 0, "--F"});
  CHECK(input.forward.size() == 3);
  set_scenario_field_from_text(input, "pipeline.schedule", "zb-h1", {"", 0, "--schedule"});
  CHECK(input.schedule == "zb-h1");
  set_scenario_field_from_text(input, "cluster.memory", "80GiB", {"", 0, "--memory"});
  CHECK(input.budget_bytes == 80.0 * 1024 * 1024 * 1024);
  set_scenario_field_from_text(input, "model.B", "1/3", {"", 0, "--B"});
  CHECK(input.backward_input == std::vector<Rational>{{1, 3}});
  CHECK_THROWS_WITH_AS(set_scenario_field_from_text(input, "cluster.devices", "-3", {"", 0, "-p"}),
                       "field '-p': expected an integer >= 1, got -3", Error);
}

TEST_CASE("exact decimal, size and bandwidth parsing") {
  CHECK(parse_rational("0.1") == Rational{1, 10});
  CHECK(parse_rational("-1.25") == Rational{-5, 4});
  CHECK(parse_rational("1e-3") == Rational{1, 1000});
  CHECK(parse_rational("2.5e2") == Rational{250, 1});
  CHECK(parse_rational("3/4") == Rational{3, 4});
  CHECK_FALSE(parse_rational("1/0").has_value());
  CHECK_FALSE(parse_rational("1.2.3").has_value());
  CHECK_FALSE(parse_rational("").has_value());
  CHECK(rational_from_double(0.1) == Rational{1, 10});
  CHECK(parse_byte_size("32MiB") == 32.0 * 1024 * 1024);
  CHECK(parse_byte_size("2KB") == 2000.0);
  CHECK_FALSE(parse_byte_size("-1GB").has_value());
  CHECK(parse_bandwidth("50GB/s") == 50e9);
  CHECK(parse_bandwidth("400Gb/s") == 50e9);
  CHECK(std::isinf(*parse_bandwidth("inf")));
  CHECK_FALSE(parse_bandwidth("0GB/s").has_value());
}

TEST_CASE("issue_13 M_w, what W leaves allocated, is a scenario field in both units") {
  const RunInput input =
      parse_scenario("[model]\nw_stash = 0.75\nw_residue = 0.25\n[model.memory]\nact_bytes = "
                     "1000\nkept_after_w = 100\n",
                     "s.toml");
  CHECK(input.w_residue == 0.25);
  REQUIRE(input.bytes.kept_after_w.size() == 1);
  CHECK(input.bytes.kept_after_w[0] == 100);
  Scenario scenario = build_scenario(input, find_schedule("1f1b"));
  CHECK(scenario.activations.stages[0].kept_after_w == doctest::Approx(0.25));
  CHECK(scenario.bytes->stages[0].kept_after_w == 100);
  const auto build_error = [](const std::string &text) {
    return testing::error_message(
        [&] { build_scenario(parse_scenario(text, "s.toml"), find_schedule("1f1b")); });
  };
  CHECK(build_error("[model]\nw_stash = 0.5\nw_residue = 0.75\n") ==
        "s.toml:3: field 'model.w_residue': W cannot leave more (0.75) than B keeps for it (0.5)");
  CHECK(build_error("[model.memory]\nact_bytes = 1000\nkept_after_b = 200\nkept_after_w = 300\n") ==
        "s.toml:4: field 'model.memory.kept_after_w': stage 0 keeps 300 bytes after W, more than "
        "the 200 bytes B "
        "keeps for it");
}

TEST_CASE("issue_17 a bad element of layers_per_stage keeps the field's file, line and name") {
  CHECK(error_of("[model]\nlayers_per_stage = [2, -1]\n") ==
        "s.toml:2: field 'model.layers_per_stage': expected an integer >= 1, got -1");
}

TEST_CASE("issue_29 the runtime, the node topology and the ILP's node limit are scenario fields") {
  const RunInput input = parse_scenario(R"([cluster]
runtime = "megatron"
gpus_per_node = 8
[cluster.inter_node_link]
latency = 0.02
bandwidth = "25GB/s"
[remat]
node_limit = 500
)",
                                        "s.toml", ".");
  CHECK(input.runtime == Runtime::megatron);
  CHECK(input.gpus_per_node == 8);
  CHECK(input.inter_node_latency == Rational{1, 50});
  CHECK(input.inter_node_bandwidth_bytes_per_second == 25e9);
  CHECK(input.remat_node_limit == 500);
  CHECK(error_of("[cluster]\nruntime = \"deepspeed\"\n") ==
        "s.toml:2: field 'cluster.runtime': expected one of ideal, torch, megatron, got "
        "\"deepspeed\"");
  CHECK(error_of("[cluster]\ngpus_per_node = 0\n") ==
        "s.toml:2: field 'cluster.gpus_per_node': expected an integer >= 1, got 0");
  CHECK(error_of("[remat]\nnode_limit = -1\n") ==
        "s.toml:2: field 'remat.node_limit': expected an integer >= 0, got -1");
  // A link field beside the runtime that sets it: refused where the scenario is built, naming
  // the line of the field.
  RunInput both = parse_scenario("[cluster]\nruntime = \"torch\"\n[cluster.link]\n"
                                 "contention = false\n",
                                 "s.toml", ".");
  both.forward = {{1, 1}};
  CHECK(testing::error_message([&] { build_scenario(both, find_schedule("1f1b")); }) ==
        "s.toml:4: field 'cluster.link.contention': is set by cluster.runtime; give one of them");
}
