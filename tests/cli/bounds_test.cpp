// `ppsim bounds` in-process (cli/bounds.cpp): exact text and JSON for the oracle rows of
// docs/oracles.md, "Bounds at small caps", and the error paths.
#include "cli/commands.h"
#include "tests/cli/command_support.h"

#include <doctest/doctest.h>

#include <sstream>
#include <string>

namespace {

using ppsim::testing::Output;
using ppsim::testing::run;

const ppsim::cli::Args kOracle{"-p", "2",   "-m", "4",   "--F", "1",          "--B",
                               "1",  "--W", "0",  "--K", "1",   "--schedule", "allremat-1f1b"};

} // namespace

TEST_CASE("bounds --format json has the keys of docs/bounds.md") {
  // p = 2, m = 4, F = Bf = 1, K = 1: LB0 = 4, LB1 = 10, LB2 = 11 (docs/oracles.md, "Bounds at small
  // caps"), LB4 = 10 (device 0 waits until 3 with one forward kept: 3 + 8 - 1), span bound 11
  // (device 0 at x = 1: max(11, 10)), all-remat 1F1B closed form 12.
  ppsim::cli::Args args = kOracle;
  args.insert(args.end(), {"--format", "json"});
  const Output output = run(ppsim::cli::run_bounds, args);
  CHECK(output.code == 0);
  CHECK(output.out ==
        "{\"lower_bounds\": {\"LB0\": 4, \"LB1\": 10, \"LB2\": 11, \"LB4\": 10, \"span_LB\": 11}, "
        "\"best_lower_bound\": 11, \"closed_form\": 12}\n");
}

TEST_CASE("bounds text output") {
  const Output output = run(ppsim::cli::run_bounds, kOracle);
  CHECK(output.code == 0);
  CHECK(output.out == "lower bounds on the makespan (p = 2, m = 4, K = 1):\n"
                      "  LB0      4\n"
                      "  LB1      10\n"
                      "  LB2      11  (integer scan)\n"
                      "  LB4      10\n"
                      "  span_LB  11  (largest per-device span, not the makespan)\n"
                      "best lower bound: 11\n"
                      "closed form (allremat-1f1b): 12\n");
}

TEST_CASE("the bounds header shows m as the user wrote it, both pipes of DualPipe together") {
  const Output output =
      run(ppsim::cli::run_bounds, {"-p", "4", "-m", "8", "--schedule", "dualpipe"});
  CHECK(output.code == 0);
  CHECK(output.out.starts_with("lower bounds on the makespan (p = 4, m = 8, K = none):\n"));
}

TEST_CASE("bounds for a split schedule list LB3 and --predict-memory compares peaks") {
  const Output output = run(ppsim::cli::run_bounds, {"-p", "4", "-m", "16", "--schedule", "zb-h1",
                                                     "--predict-memory", "--format", "json"});
  CHECK(output.code == 0);
  // ZB-H1, F = B = W = 1: LB3 = (p-1)F + m(F+B+W) = 51, closed form m(F+B+W) + (p-1)(F+B-W) = 51.
  CHECK(output.out.find("\"LB3\": 51") != std::string::npos);
  CHECK(output.out.find("\"best_lower_bound\": 51, \"closed_form\": 51") != std::string::npos);
  CHECK(output.out.find("\"predicted_peak\": [4, 4, 4, 4], \"lifespan_bound\": [4, 4, 4, 4], "
                        "\"simulated_peak\": [4, 4, 4, 4]") != std::string::npos);
}

TEST_CASE("bounds rejects a bad format") {
  const Output output = run(ppsim::cli::run_bounds, {"--format", "xml"});
  CHECK(output.code == 1);
  CHECK(output.err == "ppsim: error: field '--format': expected text or json, got \"xml\"\n");
}

TEST_CASE("issue_27 a byte budget is named in the bounds header: turned into K, or not in them") {
  const std::string model = PPSIM_SOURCE_DIR "/scenarios/models/llama2-7b.toml";
  const Output bytes =
      run(ppsim::cli::run_bounds, {model, "--memory", "24GiB", "--schedule", "zb-v"});
  CHECK(bytes.code == 0);
  CHECK(bytes.out.starts_with("lower bounds on the makespan (p = 8, m = 64, K = none; the 24 GiB "
                              "byte budget is not in these bounds):\n"));
  const Output count = run(ppsim::cli::run_bounds, {model, "--memory", "24GiB", "--memory-model",
                                                    "count", "--schedule", "zb-v"});
  CHECK(count.code == 0);
  CHECK(count.out.starts_with(
      "lower bounds on the makespan (p = 8, m = 64, K = 3.026, of the 24 GiB budget):\n"));
  // simulate and compare name the count model's cap as the budget's too.
  const Output simulated = run(ppsim::cli::run_simulate, {model, "--memory", "24GiB",
                                                          "--memory-model", "count", "--schedule",
                                                          "zb-v"});
  CHECK(simulated.out.find("memory: peak 8 activations (cap 3.026: K of the 24 GiB budget in the "
                           "count model)  feasible no\n") != std::string::npos);
  const Output compared =
      run(ppsim::cli::run_compare, {model, "--memory", "24GiB", "--memory-model", "count",
                                    "--schedules", "1f1b,zb-v", "--remat", "none,full", "-q"});
  CHECK(compared.out.starts_with("model llama2-7b  memory cap K of the 24 GiB budget per schedule, "
                                 "in the count model (memory_model = \"bytes\" checks bytes)  "
                                 "(p=8 m=64)\n"));
  const Output byte_ranked = run(ppsim::cli::run_compare, {model, "--schedules", "1f1b,zb-v",
                                                           "--remat", "none,full", "-q"});
  CHECK(byte_ranked.out.find("the bounds know no byte budget: a gap includes what fitting 80 GiB "
                             "costs\n") != std::string::npos);
}

TEST_CASE("issue_33 bounds of a run too large to simulate: no schedule is built") {
  // 1024 stages x 65536 microbatches is above the size limit of a simulated run, not of its
  // bounds, which read the scenario only.
  const Output big = run(ppsim::cli::run_bounds, {"-p", "1024", "-m", "65536", "--schedule", "1f1b"});
  CHECK(big.code == 0);
  CHECK(big.out.starts_with("lower bounds on the makespan (p = 1024, m = 65536, K = none):\n"));
  // (m + p - 1)(F + B + W) with F = B = W = 1
  CHECK(big.out.find("closed form (1f1b): 199677\n") != std::string::npos);
  const Output simulated = run(ppsim::cli::run_simulate, {"-p", "1024", "-m", "65536"});
  CHECK(simulated.code != 0);
  // What needs the order still builds it, under the guard.
  const Output predicted = run(ppsim::cli::run_bounds, {"-p", "1024", "-m", "65536",
                                                        "--predict-memory"});
  CHECK(predicted.code != 0);
}
