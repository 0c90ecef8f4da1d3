// The model zoo (scenarios/models/) as the test bed: every schedule does the whole model's work,
// the device memory counts weights, gradients and optimizer states the same way everywhere, the
// budget is respected or refused in one line, and `ppsim compare` answers on every model.
#include "tests/cli/cli_support.h"

#include "base/error.h"
#include "costs/cost_file.h"
#include "run/prepare.h"
#include "sim/engine.h"
#include "run/scenario_file.h"
#include "sim/metrics.h"
#include "sim/schedules/registry.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>

using namespace ppsim;
using ppsim::testing::CommandResult;
using ppsim::testing::Scratch;

namespace {

std::vector<std::string> zoo_scenarios() {
  std::vector<std::string> paths;
  for (const auto &entry :
       std::filesystem::directory_iterator(std::string(PPSIM_SOURCE_DIR) + "/scenarios/models")) {
    if (entry.path().extension() == ".toml")
      paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// m x (F + B + W) summed over the cost file's layers: the work of one iteration.
Rational iteration_work(const CostFile &file, int microbatches) {
  Rational sum{0, 1};
  for (const CostRow &row : file.rows)
    sum = normalized(sum + row.fwd_ms + row.bwd_input_ms + row.bwd_weight_ms);
  return normalized(sum * Rational{microbatches, 1});
}

Ticks total_ideal(const Simulation &simulation) {
  Ticks total{0};
  for (const DeviceMetrics &device : simulation.metrics.devices)
    total = total + (device.busy - device.recompute);
  return total;
}

} // namespace

TEST_CASE("the zoo ships a cost file and a budgeted scenario per model") {
  const std::vector<std::string> scenarios = zoo_scenarios();
  REQUIRE(scenarios.size() == 8);
  for (const std::string &path : scenarios) {
    CAPTURE(path);
    const RunInput input = read_scenario_file(path);
    CHECK(input.budget_bytes == doctest::Approx(80.0 * 1024 * 1024 * 1024));
    CHECK(input.microbatches >= 64);
    const CostFile file = read_cost_file(input.costs_files.front());
    // The embedding and the LM head are layers of their own, so the end stages are unbalanced.
    CHECK(file.rows.front().layer_type == "embedding");
    CHECK(file.rows.back().layer_type == "lm_head");
    CHECK(file.rows.back().fwd_ms != file.rows[1].fwd_ms);
  }
}

TEST_CASE("the zoo's cost files are what scripts/make-model-zoo writes today") {
  Scratch scratch("zoo-regenerated");
  const std::string out = scratch.file("models");
  std::filesystem::create_directories(out);
  const std::string command = fmt::format("'{}/scripts/make-model-zoo' '{}' '{}' >/dev/null",
                                          PPSIM_SOURCE_DIR, PPSIM_BINARY, out);
  REQUIRE(std::system(command.c_str()) == 0);
  int compared = 0;
  for (const auto &entry : std::filesystem::directory_iterator(out)) {
    CAPTURE(entry.path().filename().string());
    std::ifstream fresh(entry.path());
    std::ifstream shipped(std::string(PPSIM_SOURCE_DIR) + "/scenarios/models/" +
                          entry.path().filename().string());
    std::ostringstream a, b;
    a << fresh.rdbuf();
    b << shipped.rdbuf();
    CHECK(a.str() == b.str());
    ++compared;
  }
  CHECK(compared == 8);
}

TEST_CASE("every schedule does the whole model's work on every zoo model") {
  // sum over devices of (busy - recompute) = m x the layers' F + B + W, for one-chunk, chunked,
  // V-shaped and two-pipe placements alike (DualPipe runs m/2 microbatches through each copy).
  int checked = 0;
  for (const std::string &path : zoo_scenarios()) {
    RunInput input = read_scenario_file(path);
    const CostFile file = read_cost_file(input.costs_files.front());
    for (const ScheduleInfo &info : schedule_registry()) {
      CAPTURE(path);
      CAPTURE(info.name);
      input.schedule = info.name;
      PreparedRun run;
      try {
        run = prepare_run(input);
      } catch (const Error &) {
        continue; // the schedule's own constraints (m >= 2p, layers >= stages, ...)
      }
      const Simulation simulation = simulate(run.scenario, run.schedule);
      CHECK(total_ideal(simulation) ==
            run.scenario.time_scale.to_ticks(iteration_work(file, input.microbatches)));
      ++checked;
    }
  }
  CHECK(checked >= 8 * 15);
}

TEST_CASE("with scalar costs per device every schedule does the same work") {
  for (const ScheduleInfo &info : schedule_registry()) {
    CAPTURE(info.name);
    RunInput input;
    input.schedule = info.name;
    input.devices = 4;
    input.microbatches = 16;
    input.forward = {{3, 2}};
    input.backward_input = {{2, 1}};
    input.backward_weight = {{1, 1}};
    PreparedRun run;
    try {
      run = prepare_run(input);
    } catch (const Error &) {
      continue;
    }
    const Simulation simulation = simulate(run.scenario, run.schedule);
    CHECK(total_ideal(simulation) == run.scenario.time_scale.to_ticks({16 * 4 * 9, 2}));
  }
}

TEST_CASE("device memory: weights, gradients, sharded optimizer states and activations, by hand") {
  // Two devices, one layer per stage, 1F1B with m = 4: device 0 holds p = 2 activations at its
  // peak, device 1 one. Per layer: act 100, params 10, grads 10 (default = params), optimizer
  // states 60 sharded over 2 ranks = 30: resident 50. Peaks: 50 + 2 x 100 + the F transient 7
  // on device 0, 50 + 100 + 7 on device 1.
  RunInput input;
  input.devices = 2;
  input.microbatches = 4;
  input.memory_model = MemoryModel::bytes;
  input.bytes.activation = {100};
  input.bytes.parameters = {10};
  input.bytes.optimizer = {60};
  input.bytes.peak_forward = {7};
  input.optimizer_shards = 2;
  const PreparedRun run = prepare_run(input);
  REQUIRE(run.scenario.bytes.has_value());
  CHECK(run.scenario.bytes->device_constant == std::vector<double>{50, 50});
  const Simulation simulation = simulate(run.scenario, run.schedule);
  CHECK(simulation.metrics.devices[0].peak_bytes == 257);
  CHECK(simulation.metrics.devices[1].peak_bytes == 157);

  // cost_unit = "device" splits the per-microbatch bytes over the chunks like the times: ZB-V's
  // two chunks of 50 hold what 1F1B's one stage of 100 holds, the resident state too.
  input.schedule = "zb-v";
  const PreparedRun v = prepare_run(input);
  CHECK(v.scenario.bytes->stages[0].stored == 50);
  CHECK(v.scenario.bytes->device_constant == std::vector<double>{50, 50});
  input.costs_per_device = false;
  CHECK(prepare_run(input).scenario.bytes->device_constant == std::vector<double>{100, 100});
}

TEST_CASE("a budget below the resident state names it in one line") {
  Scratch scratch("budget-too-small");
  const CommandResult result = scratch.ppsim(fmt::format(
      "simulate '{}/scenarios/models/llama3-8b.toml' --memory-model count --memory 16GiB",
      PPSIM_SOURCE_DIR));
  CHECK(result.exit_code == 1);
  CHECK(result.err ==
        "ppsim: error: field '--memory': the budget does not even hold the weights, gradients and "
        "optimizer states (16.25 GiB on the fullest device)\n");
}

TEST_CASE("ppsim compare ranks schedule and recomputation pairs on every zoo model") {
  Scratch scratch("compare-zoo");
  for (const std::string &path : zoo_scenarios()) {
    CAPTURE(path);
    // The ILP's plans are ranked in the next case; here the baselines keep the suite fast.
    const CommandResult result =
        scratch.ppsim(fmt::format("compare '{}' --remat none,full -q", path));
    REQUIRE(result.exit_code == 0);
    CHECK(result.err.empty());
    CHECK(result.out.find("budget 80 GiB") != std::string::npos);
    CHECK(result.out.find("winner: ") != std::string::npos);
    CHECK(result.out.find("e+") == std::string::npos); // no scientific notation
    // Every row that fits is under the budget and at or above its lower bound.
    std::istringstream lines(result.out);
    std::string line;
    int fitting = 0;
    while (std::getline(lines, line)) {
      std::istringstream cells(line);
      std::string schedule, policy, makespan, max_span, bubble, span_bubble, peak, recomputed, fits,
          bound;
      if (!(cells >> schedule >> policy >> makespan >> max_span >> bubble >> span_bubble >> peak >>
            recomputed >> fits >> bound) ||
          fits != "yes") {
        continue;
      }
      ++fitting;
      CHECK(std::stod(peak) <= 80.0);
      CHECK(std::stod(makespan) >= std::stod(bound));
    }
    CHECK(fitting > 0);
  }
}

TEST_CASE("an ILP the solver cannot finish or survive leaves the ranking standing") {
  // zb-h1 on this model makes Clp fail an assertion inside the LP solver (COIN-OR CBC 2.10); the
  // solve runs in a child process, so the row says why and the others are ranked.
  Scratch scratch("compare-ilp");
  const CommandResult result =
      scratch.ppsim(fmt::format("compare '{}/scenarios/models/llama2-7b.toml' --schedules "
                                "zb-h1,zb-v --remat none,ilp --memory 30GiB --time-limit 3 -q",
                                PPSIM_SOURCE_DIR));
  REQUIRE(result.exit_code == 0);
  CHECK(result.err.empty());
  CHECK(result.out.find("zb-v             ilp ") != std::string::npos);
  CHECK(result.out.find("zb-h1            ilp ") != std::string::npos);
  // The two runs without recomputation are ranked whatever the solver did in its time limit.
  CHECK(result.out.find("zb-v             none ") != std::string::npos);
  CHECK(result.out.find("zb-h1            none ") != std::string::npos);
}

TEST_CASE("compare writes the winner's plan and PyTorch schedule, and refuses when nothing fits") {
  Scratch scratch("compare-outputs");
  const std::string model = fmt::format("'{}/scenarios/models/llama2-7b.toml'", PPSIM_SOURCE_DIR);
  const CommandResult result = scratch.ppsim(
      "compare " + model +
      " --schedules 1f1b,zb-h1 --remat none,full --memory 24GiB --plan plan.csv --torch-csv "
      "order.csv -q");
  REQUIRE(result.exit_code == 0);
  // ZB-H1 defers W: its last device holds eight W stashes, which recomputing forwards does not
  // touch, so 1F1B with full recomputation is what fits.
  CHECK(result.out.find("winner: 1f1b with full recomputation") != std::string::npos);
  CHECK(scratch.read("plan.csv").starts_with("stage,microbatch,fwd,bwd\n"));
  CHECK(scratch.read("order.csv").starts_with("0F0,"));

  const CommandResult none =
      scratch.ppsim("compare " + model + " --remat none --memory 16GiB --plan p2.csv");
  CHECK(none.exit_code == 1);
  CHECK(none.err ==
        "ppsim: error: no schedule and recomputation policy fits the memory cap, so there is "
        "nothing to write\n");
  CHECK_FALSE(scratch.exists("p2.csv"));
  const CommandResult least =
      scratch.ppsim("compare " + model + " --remat none,full --memory 16GiB");
  CHECK(least.exit_code == 0);
  CHECK(least.err.find("ppsim: no schedule fits 16 GiB; the least memory any schedule and policy "
                       "reached is 16.59 GiB\n") != std::string::npos);
}

TEST_CASE("issue_12 the README's first command: files for the fastest run PyTorch and a plan can "
          "express") {
  // DualPipe wins on LLaMA-2 7B at 80 GiB without recomputation (FlashAttention records fit),
  // but two pipes have no PyTorch form: the files describe the fastest run that has one, and its
  // plan file is empty, said so.
  Scratch scratch("readme-command");
  const CommandResult result = scratch.ppsim(fmt::format(
      "compare '{}/scenarios/models/llama2-7b.toml' --plan plan.csv --torch-csv order.csv -q",
      PPSIM_SOURCE_DIR));
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("winner: dualpipe, makespan 3347 ms") != std::string::npos);
  CHECK(result.out.find("dualpipe has no PyTorch pipelining form; the files below are for "
                        "zb-v-greedy, the fastest run that has (makespan 3510 ms, +4.89%)\n"
                        "recomputation plan of zb-v-greedy written to plan.csv (empty: the run "
                        "fits without recomputation)\n"
                        "PyTorch schedule of zb-v-greedy written to order.csv\n") !=
        std::string::npos);
  CHECK(scratch.read("order.csv").find("0F0") != std::string::npos);
  CHECK(scratch.read("plan.csv") == "stage,microbatch,fwd,bwd\n");
  // The files replay to the makespan compare printed.
  const CommandResult replay = scratch.ppsim(fmt::format(
      "simulate '{}/scenarios/models/llama2-7b.toml' --schedule zb-v-greedy --remat file:plan.csv",
      PPSIM_SOURCE_DIR));
  REQUIRE(replay.exit_code == 0);
  CHECK(replay.out.find("makespan 3510 ") != std::string::npos);
  CHECK(replay.out.find("feasible yes") != std::string::npos);
}

TEST_CASE("issue 12: compare warns when per-stage costs make chunked schedules do more work") {
  Scratch scratch("compare-unfair");
  const CommandResult result = scratch.ppsim(
      "compare -p 4 -m 8 --F 1 --B 1 --W 1 --cost-unit stage --schedules 1f1b,zb-v -q");
  CHECK(result.exit_code == 0);
  CHECK(result.err == "ppsim: warning: model.cost_unit = \"stage\" gives schedules with 2 chunks "
                      "per device 2 times "
                      "the work of those with 1; use \"device\" to compare the same model\n");
  CHECK(scratch.ppsim("compare -p 4 -m 8 --F 1 --B 1 --W 1 --schedules 1f1b,zb-v -q").err.empty());
}

TEST_CASE("simulate, bounds, partition and remat answer on every zoo model") {
  // Each command either answers (budget respected where it says it fits, bounds <= makespan) or
  // refuses in one line.
  Scratch scratch("every-command");
  for (const std::string &path : zoo_scenarios()) {
    CAPTURE(path);
    const RunInput input = read_scenario_file(path);
    const CommandResult simulated = scratch.ppsim(
        fmt::format("simulate '{}' --schedule zb-h1 --remat full --format json", path));
    REQUIRE(simulated.exit_code == 0);
    const nlohmann::json run = nlohmann::json::parse(simulated.out);
    if (run["feasible"].get<bool>()) {
      for (const nlohmann::json &device : run["devices"])
        CHECK(device["peak_bytes"].get<double>() <= *input.budget_bytes);
      CHECK(run["best_lower_bound"].get<double>() <= run["makespan"].get<double>());
    } else {
      CHECK_FALSE(run["violations"].empty());
    }
    const CommandResult bounds =
        scratch.ppsim(fmt::format("bounds '{}' --schedule zb-h1 --format json", path));
    REQUIRE(bounds.exit_code == 0);
    CHECK(nlohmann::json::parse(bounds.out)["best_lower_bound"].get<double>() > 0);
    const CommandResult split =
        scratch.ppsim(fmt::format("partition '{}' --stages {} --memory 80GiB --mode remat-aware",
                                  input.costs_files.front(), input.devices));
    if (split.exit_code == 0) {
      CHECK(split.out.find("partition = [") != std::string::npos);
    } else {
      CHECK(split.exit_code == 1);
      CHECK(std::count(split.err.begin(), split.err.end(), '\n') == 1);
    }
  }
  const CommandResult remat = scratch.ppsim(
      fmt::format("remat '{}/scenarios/models/llama2-7b.toml' --schedule 1f1b --time-limit 3",
                  PPSIM_SOURCE_DIR));
  REQUIRE(remat.exit_code == 0);
  // The baselines see the cost file: selective uses its own columns (it failed for want of byte
  // sizes before), and budgets print in GiB.
  CHECK(remat.out.starts_with(
      "schedule 1f1b, p = 8, m = 64, v = 1, budget 80 GiB (byte model, early timing, selective "
      "as a level per stage)\n"));
  CHECK(remat.out.find("selective  fits            4105       4105    31.14 GiB  512") !=
        std::string::npos);
}

TEST_CASE("issue_27 compare and remat --auto rank the same runs and name the same winner") {
  // At 11 GiB only V-Half fits as it is: the ILP, selective and full recomputation compete, and
  // the ILP, which may choose selective recomputation per (s,j), is never slower than a uniform
  // policy that fits (docs/remat.md, "--auto" and "Checkpoint levels").
  Scratch scratch("zoo-auto");
  const std::string model = fmt::format("'{}/scenarios/models/gpt-1.5b.toml'", PPSIM_SOURCE_DIR);
  const std::string options = " --memory 11GiB --time-limit 60 -q";
  const CommandResult compared =
      scratch.ppsim("compare " + model + " --schedules 1f1b,zb-h1,zb-v,v-half" + options);
  const CommandResult ranked =
      scratch.ppsim("remat " + model + " --auto --candidates 1f1b,zb-h1,zb-v,v-half" + options);
  REQUIRE(compared.exit_code == 0);
  REQUIRE(ranked.exit_code == 0);
  // compare: "winner: zb-v with ilp recomputation (N ops), makespan X ms, ..."
  const std::string prefix = "\nwinner: zb-v with ilp recomputation (";
  const std::size_t at = compared.out.find(prefix);
  REQUIRE(at != std::string::npos);
  const std::size_t from = compared.out.find("makespan ", at) + 9;
  const std::string makespan = compared.out.substr(from, compared.out.find(' ', from) - from);
  CHECK(ranked.out.find("\nwinner: zb-v + ilp\n") != std::string::npos);
  const std::size_t first = ranked.out.find("\n1    zb-v              ilp       ");
  REQUIRE(first != std::string::npos);
  CHECK(ranked.out.substr(first, 80).find(" " + makespan + " ") != std::string::npos);
  // Each schedule's row is its fastest run, in compare's order.
  const std::vector<std::string> order{"zb-v", "zb-h1", "1f1b", "v-half"};
  std::size_t last = 0;
  for (int rank = 1; rank <= 4; ++rank) {
    const std::size_t row = ranked.out.find(fmt::format("\n{:<4} {} ", rank, order[rank - 1]));
    CAPTURE(rank);
    CHECK(row != std::string::npos);
    CHECK(row >= last);
    last = row;
  }
  // Per schedule, the makespan of `policy` when its row fits (0 otherwise).
  const auto fitting_makespan = [&](const std::string &schedule, const std::string &policy) {
    const std::size_t row = compared.out.find(fmt::format("\n{:<16} {:<10}", schedule, policy));
    if (row == std::string::npos)
      return 0.0;
    const std::string line = compared.out.substr(row + 1, compared.out.find('\n', row + 1) - row);
    return line.find(" yes ") != std::string::npos ? std::stod(line.substr(28, 10)) : 0.0;
  };
  for (const char *schedule : {"zb-v", "zb-h1", "1f1b"}) {
    CAPTURE(schedule);
    const double ilp = fitting_makespan(schedule, "ilp");
    REQUIRE(ilp > 0);
    for (const char *policy : {"none", "full", "selective"}) {
      const double uniform = fitting_makespan(schedule, policy);
      if (uniform > 0)
        CHECK(ilp <= uniform);
    }
  }
}

TEST_CASE("issue_27 the elf form solves a zoo model without the selective level") {
  // The elf form has no levels; the selective level, added wherever the cost file measures
  // selective recomputation, once made it refuse every zoo model.
  Scratch scratch("zoo-elf");
  const CommandResult elf = scratch.ppsim(
      fmt::format("remat '{}/scenarios/models/gpt-1.5b.toml' --schedule 1f1b --memory 40GiB "
                  "--ilp-form elf --time-limit 2",
                  PPSIM_SOURCE_DIR));
  REQUIRE(elf.exit_code == 0);
  CHECK(elf.out.starts_with("schedule 1f1b, p = 8, m = 64, v = 1, budget 40 GiB (byte model, "
                            "lumped timing, elf form)\n"));
  CHECK(elf.out.find("\nselective  fits ") != std::string::npos);
  CHECK(elf.out.find("\nilp-elf    ") != std::string::npos);
}

TEST_CASE("issue_12 a split the cost file cannot give is refused on a zoo model") {
  Scratch scratch("zoo-split");
  const std::string model = fmt::format("'{}/scenarios/models/gpt-1.5b.toml'", PPSIM_SOURCE_DIR);
  const CommandResult split =
      scratch.ppsim("simulate " + model + " --schedule interleaved-1f1b -v 4");
  CHECK(split.exit_code == 1);
  CHECK(split.err.ends_with(
      ":10: field 'model.costs_file': the cost file has 24 layers, fewer than the 32 stages\n"));
}

TEST_CASE("issue_13 remat prints its baselines when the ILP has no plan, and says why") {
  // zb-h1 on this model makes Clp abort inside CBC (COIN-OR 2.10 on Debian 12): the baselines
  // still print, the ilp row names the death, and the exit code is 2 (an internal failure).
  Scratch scratch("remat-no-plan");
  const CommandResult result = scratch.ppsim(
      fmt::format("remat '{}/scenarios/models/llama2-7b.toml' --schedule zb-h1 --time-limit 3",
                  PPSIM_SOURCE_DIR));
  CHECK(result.out.find("\nselective  fits ") != std::string::npos);
  CHECK(result.out.find("\ngreedy     fits ") != std::string::npos);
  if (result.exit_code == 2) {
    CHECK(result.out.find("\nilp        failed             -") != std::string::npos);
    CHECK(result.err ==
          "ppsim: internal error: the ILP solver failed: COIN-OR CBC died of signal 6 (Aborted)\n");
  } else {
    CHECK(result.exit_code == 0); // a solver that survives this model answers with a plan
    CHECK(result.out.find("\nilp        ") != std::string::npos);
  }
}
