// From input to a runnable scenario: cost files summed into stages (docs/profiler.md, "The cost
// file") and CSV imports.
#include "base/index.h"
#include "run/prepare.h"
#include "run/scenario_file.h"

#include "base/error.h"
#include "costs/cost_file.h"
#include "sim/metrics.h"
#include "sim/schedules/registry.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace ppsim;

namespace {

struct TemporaryFile {
  std::string path;
  TemporaryFile(const std::string &name, const std::string &content)
      : path((std::filesystem::temp_directory_path() / name).string()) {
    std::ofstream(path) << content;
  }
  ~TemporaryFile() { std::remove(path.c_str()); }
};

const char *kLayers =
    "schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms,activation_bytes_full,"
    "output_bytes,param_bytes\n"
    "1,0,0.5,1,0.25,100,10,1000\n"
    "1,1,0.5,1,0.25,100,10,1000\n"
    "1,2,1.5,2,0.75,300,30,3000\n"
    "1,3,0.25,0.5,0.125,50,5,500\n";

} // namespace

TEST_CASE("a cost file written and read back gives the stage sums") {
  // Round trip: parse -> write -> file -> scenario loader -> same per-stage costs.
  const TemporaryFile file("ppsim-run-setup-layers.csv",
                           write_cost_csv(parse_cost_csv(kLayers, "layers.csv")));
  RunInput input;
  input.devices = 2;
  input.microbatches = 4;
  input.costs_files = {file.path};
  const PreparedRun even = prepare_run(input); // 2 layers per stage
  const TimeScale &scale = even.scenario.time_scale;
  CHECK(even.scenario.stage_costs[0].forward == scale.to_ticks({1, 1}));
  CHECK(even.scenario.stage_costs[1].forward == scale.to_ticks({7, 4}));
  CHECK(even.scenario.stage_costs[1].backward_input == scale.to_ticks({5, 2}));
  CHECK(even.scenario.stage_costs[1].backward_weight == scale.to_ticks({7, 8}));
  CHECK(even.scenario.stage_costs[1].recompute_forward ==
        scale.to_ticks({7, 4})); // R defaults to F
  REQUIRE(even.scenario.bytes.has_value());
  CHECK(even.scenario.bytes->stages[1].stored == 350);
  CHECK(even.scenario.bytes->device_constant[1] == 2 * 3500);
  // The count unit follows the bytes: stage activations relative to their device's share.
  CHECK(even.scenario.activations.stages[0].stored == 1);

  input.layers_per_stage = {1, 3};
  const PreparedRun uneven = prepare_run(input);
  CHECK(uneven.scenario.stage_costs[0].forward == uneven.scenario.time_scale.to_ticks({1, 2}));
  CHECK(uneven.scenario.stage_costs[1].forward == uneven.scenario.time_scale.to_ticks({9, 4}));

  // An explicit value wins over the cost file.
  input.forward = {{3, 1}};
  input.origins["model.F"] = SourceLocation{"s.toml", 2, "model.F"};
  CHECK(prepare_run(input).scenario.stage_costs[0].forward ==
        prepare_run(input).scenario.time_scale.to_ticks({3, 1}));
}

TEST_CASE("issue_29 cluster.runtime_bytes: held by every device beside the model, from every budget") {
  // Device 1 holds 3500 bytes of parameters and as many of gradients; a runtime of 1000 bytes
  // (NCCL's buffers, the allocator's reserve) adds 1000 to every device's resident state, to its
  // peak, and takes 1000 from what a budget leaves the activations (K, the partition's budget).
  const TemporaryFile file("ppsim-run-setup-runtime.csv", kLayers);
  RunInput input;
  input.devices = 2;
  input.microbatches = 4;
  input.costs_files = {file.path};
  input.memory_model = MemoryModel::bytes;
  const PreparedRun plain = prepare_run(input);
  set_scenario_field_from_text(input, "cluster.runtime_bytes", "1000", {"", 0, "--set"});
  const PreparedRun with_runtime = prepare_run(input);
  for (int d = 0; d < 2; ++d) {
    CHECK(with_runtime.scenario.bytes->device_constant[ppsim::at(d)] ==
          plain.scenario.bytes->device_constant[ppsim::at(d)] + 1000);
  }
  const auto peak = [](const PreparedRun &run) {
    return *simulate(run.scenario, run.schedule).metrics.max_peak_bytes();
  };
  CHECK(peak(with_runtime) == peak(plain) + 1000);
  // The count model's K from a budget: (budget - resident) / activation, the strictest device.
  input.memory_model = MemoryModel::count;
  input.budget_bytes = 7000 + 1000 + 2 * 350;
  CHECK(prepare_run(input).scenario.activations.cap == doctest::Approx(2.0));
  input.runtime_bytes = 0;
  CHECK(prepare_run(input).scenario.activations.cap == doctest::Approx(2.0 + 1000.0 / 350));
  CHECK_THROWS_WITH(set_scenario_field_from_text(input, "cluster.runtime_bytes", "-1",
                                                 {"", 0, "--set"}),
                    doctest::Contains("expected a byte size such as 80GiB, got -1"));
}

TEST_CASE("issue_29 values given beside a cost file keep their cost unit") {
  // The bug: a scalar --F beside a cost file ran a whole device's time on each chunk under the
  // default cost_unit = "device". Without a file the same value is split over the v chunks.
  const TemporaryFile file("ppsim-run-setup-unit.csv", kLayers);
  RunInput input;
  input.devices = 2;
  input.microbatches = 4;
  input.schedule = "zb-v"; // v = 2
  input.costs_files = {file.path};
  input.forward = {{3, 1}};
  input.origins["model.F"] = SourceLocation{"s.toml", 2, "model.F"};
  input.bytes.parameters = {800};
  input.origins["model.memory.param_bytes"] = SourceLocation{"s.toml", 3, "model.memory.param_bytes"};
  for (const bool per_device : {true, false}) {
    CAPTURE(per_device);
    input.costs_per_device = per_device;
    const PreparedRun run = prepare_run(input);
    const TimeScale &scale = run.scenario.time_scale;
    for (const StageCosts &stage : run.scenario.stage_costs) {
      CHECK(stage.forward == scale.to_ticks(per_device ? Rational{3, 2} : Rational{3, 1}));
    }
    // The file's own sums stay per stage: one layer per stage, layer 0 first.
    CHECK(run.scenario.stage_costs[0].backward_input == scale.to_ticks({1, 1}));
    // Device 0 holds stages 0 and 3: the given weights (800 a device, or a stage) and the
    // file's gradients of layers 0 and 3 (their param_bytes, 1000 + 500).
    REQUIRE(run.scenario.bytes.has_value());
    CHECK(run.scenario.bytes->device_constant[0] == (per_device ? 800 : 1600) + 1500);
    // As without a cost file.
    RunInput alone = input;
    alone.costs_files.clear();
    alone.backward_input = {{1, 1}};
    alone.backward_weight = {{1, 1}};
    CHECK(prepare_run(alone).scenario.stage_costs[0].forward ==
          prepare_run(alone).scenario.time_scale.to_ticks(per_device ? Rational{3, 2}
                                                                     : Rational{3, 1}));
  }
}

TEST_CASE("issue_33 the bounds of a generated schedule need no schedule: prepare_scenario gives "
          "the same ones") {
  // `ppsim bounds` no longer builds the order (p = 1024, m = 21000: 4.7 s and 2 GB before,
  // docs/performance.md); every registered schedule's bounds and closed form must not change.
  const TemporaryFile file("ppsim-run-setup-bounds.csv", kLayers);
  int refused = 0;
  // m = 3 is below what DualPipeV (2p) and interleaved 1F1B's groups accept.
  for (const auto &[with_costs, microbatches] :
       {std::pair{false, 8}, std::pair{true, 8}, std::pair{false, 3}}) {
    for (const ScheduleInfo &info : schedule_registry()) {
      RunInput input;
      input.devices = 2;
      input.microbatches = microbatches;
      input.schedule = info.name;
      input.latency = {1, 4};
      input.cap_activations = 3;
      if (with_costs)
        input.costs_files = {file.path};
      else
        input.backward_weight = {{1, 2}};
      CAPTURE(info.name);
      CAPTURE(with_costs);
      PreparedRun built;
      try {
        built = prepare_run(input);
      } catch (const Error &error) {
        // Refused the same way: the generator's precondition is its error.
        CHECK_THROWS_WITH_AS(prepare_scenario(input), error.what(), Error);
        ++refused;
        continue;
      }
      const PreparedRun bare = prepare_scenario(input);
      CHECK(bare.schedule.name == built.schedule.name);
      CHECK(bare.schedule.device_ops.empty());
      const BoundsReport expected = bounds_for_run(built);
      const BoundsReport report = bounds_for_run(bare);
      CHECK(report.best_lower_bound == expected.best_lower_bound);
      CHECK(report.closed_form == expected.closed_form);
      REQUIRE(report.lower_bounds.size() == expected.lower_bounds.size());
      for (std::size_t k = 0; k < report.lower_bounds.size(); ++k) {
        CHECK(report.lower_bounds[k].name == expected.lower_bounds[k].name);
        CHECK(report.lower_bounds[k].value == expected.lower_bounds[k].value);
      }
    }
  }
  CHECK(refused > 0);
}

TEST_CASE("a cost file with fewer layers than stages is an error at the field") {
  const TemporaryFile file("ppsim-run-setup-few.csv", kLayers);
  RunInput input;
  input.devices = 8;
  input.costs_files = {file.path};
  input.origins["model.costs_file"] = SourceLocation{"s.toml", 4, "model.costs_file"};
  CHECK_THROWS_WITH_AS(
      prepare_run(input),
      "s.toml:4: field 'model.costs_file': the cost file has 4 layers, fewer than the 8 stages",
      Error);
}

TEST_CASE("every registered in-flight formula is the peak a run of the schedule measures") {
  int checked = 0;
  for (const ScheduleInfo &info : schedule_registry()) {
    if (!info.in_flight || !info.one_stage_per_device(0))
      continue;
    for (const int p : {2, 3, 4, 6}) {
      RunInput input;
      input.schedule = info.name;
      input.devices = p;
      input.microbatches = 4 * p;
      const std::vector<int> measured = measured_in_flight(input);
      REQUIRE(measured.size() == ppsim::at(p));
      for (int stage = 0; stage < p; ++stage) {
        CAPTURE(info.name);
        CAPTURE(p);
        CHECK(measured[ppsim::at(stage)] == info.in_flight(p, stage));
      }
      ++checked;
    }
  }
  CHECK(checked == 4 * 4); // 1f1b, 1f1b-split, zb-h1, zb-h2
}

TEST_CASE("a partition with a schedule file is refused at model.partition") {
  RunInput input;
  input.schedule_file = "order.csv";
  input.partition = "balanced";
  input.origins["model.partition"] = SourceLocation{"s.toml", 7, "model.partition"};
  CHECK_THROWS_WITH_AS(
      prepare_run(input),
      "s.toml:7: field 'model.partition': splits the layers for a generated schedule; with a "
      "schedule file give model.layers_per_stage",
      Error);
}

TEST_CASE("issue_30 a cost file with the whole backward only runs fused schedules and refuses "
          "split ones in one line") {
  const TemporaryFile file("ppsim-run-noshapes.csv",
                           "schema_version,layer_id,fwd_ms,bwd_total_ms\n1,0,1,3\n1,1,1,3\n");
  RunInput input;
  input.devices = 2;
  input.microbatches = 4;
  input.costs_files = {file.path};
  input.origins["model.costs_file"] = SourceLocation{"s.toml", 2, "model.costs_file"};
  const PreparedRun fused = prepare_run(input);
  const TimeScale &scale = fused.scenario.time_scale;
  CHECK(fused.scenario.stage_costs[0].backward_input == scale.to_ticks({3, 1}));
  CHECK(fused.scenario.stage_costs[0].backward_weight == scale.to_ticks({0, 1}));
  input.schedule = "zb-h1";
  CHECK_THROWS_WITH_AS(
      prepare_run(input),
      ("s.toml:2: field 'model.costs_file': " + file.path +
       " has the whole backward only (bwd_total_ms: a trace recorded without "
       "record_shapes=True); schedule 'zb-h1' runs B and W apart (record with shapes, or pick a "
       "fused-backward schedule)")
          .c_str(),
      Error);
  // A W given alone would be added to the whole backward (B); both B and W given are the
  // user's split, and the run takes them as given.
  input.backward_weight = {{1, 1}};
  input.origins["model.W"] = SourceLocation{"s.toml", 3, "model.W"};
  CHECK_THROWS_AS(prepare_run(input), Error);
  input.backward_input = {{2, 1}};
  input.origins["model.B"] = SourceLocation{"s.toml", 4, "model.B"};
  const PreparedRun split = prepare_run(input);
  CHECK(split.scenario.stage_costs[0].backward_input == split.scenario.time_scale.to_ticks({2, 1}));
  CHECK(split.scenario.stage_costs[0].backward_weight == split.scenario.time_scale.to_ticks({1, 1}));
}

TEST_CASE("issue_30 a cost file without byte columns counts one activation per stage and "
          "microbatch, as without a file") {
  // The bug: its absent columns were read as zero bytes, so every peak was 0 and zb-1p refused
  // ("needs a positive stored activation").
  const TemporaryFile file("ppsim-run-timesonly.csv",
                           "schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms\n"
                           "1,0,1.5,2.25,1\n1,1,1.25,2,1\n");
  RunInput input;
  input.devices = 2;
  input.microbatches = 4;
  input.costs_files = {file.path};
  input.schedule = "zb-1p";
  RunInput without_file = input;
  without_file.costs_files.clear();
  const PreparedRun with_times = prepare_run(input);
  const PreparedRun plain = prepare_run(without_file);
  CHECK_FALSE(with_times.scenario.bytes.has_value());
  for (const MemoryTrack *track : {&with_times.scenario.activations, &plain.scenario.activations})
    for (const StageMemory &stage : track->stages)
      CHECK(stage.stored == 1);
  const Simulation simulation = simulate(with_times.scenario, with_times.schedule);
  CHECK(simulation.metrics.devices[0].peak_activations == 2); // zb-1p: p per device
}

TEST_CASE("issue_30 each byte size comes from the file only where the file has its column") {
  // The review's case: a file with parameter and optimizer bytes but no activation column keeps
  // its parameter bytes (they were all dropped with the activation column).
  const TemporaryFile file("ppsim-run-params-only.csv",
                           "schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms,"
                           "param_bytes,optimizer_state_bytes\n"
                           "1,0,1,1,1,1000,4000\n1,1,1,1,1,1000,4000\n");
  RunInput input;
  input.devices = 2;
  input.microbatches = 4;
  input.costs_files = {file.path};
  input.bytes.activation = {100};
  input.origins["model.memory.act_bytes"] = SourceLocation{"s.toml", 2, "model.memory.act_bytes"};
  const PreparedRun run = prepare_run(input);
  REQUIRE(run.scenario.bytes.has_value());
  // Weights, gradients (param_bytes by default) and the optimizer's states of the stage's layer.
  CHECK(run.scenario.bytes->device_constant[0] == 1000 + 1000 + 4000);
}

TEST_CASE("cost files at several microbatch sizes are read at pipeline.microbatch_size") {
  // docs/profiler.md, "Microbatch sizes": the same layers at b = 1 and b = 4 (JSON records b).
  CostFile one = parse_cost_csv(kLayers, "layers.csv");
  one.metadata.b = 1;
  CostFile four = one;
  four.metadata.b = 4;
  for (CostRow &row : four.rows) {
    row.fwd_ms = row.fwd_ms * Rational{3, 1}; // 3x the time for 4x the samples
    row.activation_bytes_full *= 4;
  }
  const TemporaryFile b1("ppsim-sizes-b1.json", write_cost_json(one));
  const TemporaryFile b4("ppsim-sizes-b4.json", write_cost_json(four));
  const TemporaryFile csv("ppsim-sizes.csv", kLayers);
  const auto scenario = [&](const std::string &costs, const std::string &size) {
    return parse_scenario("[model]\ncosts_file = " + costs + "\n[pipeline]\nmicrobatches = 4\n" +
                              size + "[cluster]\ndevices = 2\n",
                          "s.toml", "");
  };
  const std::string both = "[\"" + b1.path + "\", \"" + b4.path + "\"]";
  // b = 2 is a third of the way: stage 1's F = 7/4 ms at b = 1, 21/4 at b = 4 -> 35/12.
  const PreparedRun two = prepare_run(scenario(both, "microbatch_size = 2\n"));
  const TimeScale &scale = two.scenario.time_scale;
  CHECK(two.scenario.stage_costs[1].forward == scale.to_ticks({35, 12}));
  CHECK(two.scenario.bytes->stages[1].stored == doctest::Approx(700));
  // At a measured size the file is read as it is.
  const PreparedRun at_four = prepare_run(scenario(both, "microbatch_size = 4\n"));
  CHECK(at_four.scenario.stage_costs[1].forward ==
        at_four.scenario.time_scale.to_ticks({21, 4}));
  // Costs loaded once for one size are not reused at another.
  RunInput shared = scenario(both, "microbatch_size = 2\n");
  load_cost_file(shared);
  shared.microbatch_size = 4;
  CHECK(prepare_run(shared).scenario.stage_costs[1].forward ==
        at_four.scenario.stage_costs[1].forward);
  RunInput single = scenario("\"" + b4.path + "\"", ""); // read at its own size, 4
  load_cost_file(single);
  single.microbatch_size = 2;
  CHECK_THROWS_AS(prepare_run(single), Error);

  const auto refusal = [&](const std::string &costs, const std::string &size) {
    try {
      prepare_run(scenario(costs, size));
    } catch (const Error &error) {
      return std::string(error.what());
    }
    return std::string();
  };
  CHECK(refusal(both, "") ==
        "s.toml:2: field 'model.costs_file': 2 cost files are given (microbatch sizes 1, 4): set "
        "pipeline.microbatch_size to the size the run uses");
  CHECK(refusal(both, "microbatch_size = 8\n") ==
        "s.toml:5: field 'pipeline.microbatch_size': microbatch size 8 is outside the sizes the "
        "cost files were profiled at (1, 4): kernels are not linear in the size, so ppsim "
        "interpolates between measured sizes and does not extrapolate; profile at 8");
  CHECK(refusal("\"" + b4.path + "\"", "microbatch_size = 2\n") ==
        fmt::format("s.toml:5: field 'pipeline.microbatch_size': {} was profiled at microbatch "
                    "size 4, not 2: kernels are not linear in the size; profile at 2, or give "
                    "files at sizes around it (model.costs_file = [...])",
                    b4.path));
  CHECK(refusal("\"" + csv.path + "\"", "microbatch_size = 2\n") ==
        fmt::format("s.toml:5: field 'pipeline.microbatch_size': {} records no microbatch size "
                    "(CSV files have none, ppsim profile import records it with --batch), so the "
                    "size cannot select its costs: give JSON cost files that record it, one per "
                    "size (model.costs_file = [...])",
                    csv.path));
  CHECK(refusal("[\"" + b1.path + "\", \"\"]", "microbatch_size = 2\n") ==
        "s.toml:2: field 'model.costs_file': expected a file name in every element, got \"\"");
  CHECK(refusal("[\"" + b1.path + "\", \"" + b1.path + "\"]", "microbatch_size = 2\n") ==
        "s.toml:2: field 'model.costs_file': lists " + b1.path + " twice");
  // Without a cost file the size has nothing to select.
  CHECK_THROWS_WITH_AS(prepare_run(parse_scenario("[pipeline]\nmicrobatch_size = 2\n", "t.toml",
                                                  "")),
                       "t.toml:2: field 'pipeline.microbatch_size': selects the costs among cost "
                       "files profiled at several sizes (model.costs_file); the times given in "
                       "the scenario are for its microbatches as they are",
                       Error);
}
