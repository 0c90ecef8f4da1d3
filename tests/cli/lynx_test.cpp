// `ppsim lynx` and `ppsim partition` in-process on a four-layer cost file: hand-computed tables
// and the one-line errors.
#include "cli/commands.h"
#include "run/prepare.h"
#include "run/scenario_file.h"
#include "tests/base/error_support.h"
#include "tests/cli/command_support.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

using ppsim::cli::Args;

namespace {

using ppsim::testing::Output;
using ppsim::testing::run;

std::vector<std::string> lines(const std::string &text) {
  std::istringstream in(text);
  std::vector<std::string> rows;
  for (std::string line; std::getline(in, line);)
    rows.push_back(line);
  return rows;
}

// Four identical GPT blocks: F = B = W = 1 ms; 1 GB of activations per microbatch, of which the
// attention core 0.6 GB (rebuilt in 0.5 ms), the rest 0.3 GB (0.5 ms), the stored input 0.1 GB;
// 0.1 GB outputs: a TP-4 all-reduce at 100 GB/s takes 1.5 ms, the P2P transfer at 25 GB/s 4 ms.
struct CostFixture {
  const std::string path = "lynx_cli_costs.csv";
  CostFixture() {
    std::ofstream file(path);
    file << "schema_version,layer_id,fwd_ms,bwd_input_ms,bwd_weight_ms,recompute_ms,"
            "recompute_selective_ms,activation_bytes_full,activation_bytes_selective,"
            "stored_input_bytes,output_bytes\n";
    for (int l = 0; l < 4; ++l)
      file << "1," << l << ",1,1,1,1,0.5,1e9,4e8,1e8,1e8\n";
  }
  ~CostFixture() { std::remove(path.c_str()); }
};

} // namespace

TEST_CASE("ppsim partition: balanced, under a memory limit, recomputation-aware") {
  const CostFixture costs;
  Output o = run(ppsim::cli::run_partition, {costs.path, "--stages", "2"});
  CHECK(o.code == 0);
  // Standard error is no terminal here: a line per stage of the DP, then what was written where.
  CHECK(o.err == "ppsim: partition: 1/2 stages\n"
                 "ppsim: partition: 2/2 stages\n"
                 "ppsim: wrote the partition into 2 stages to standard output\n");
  std::vector<std::string> rows = lines(o.out);
  REQUIRE(rows.size() == 6);
  CHECK(rows[0] == "partition of 4 layers into 2 stages: schedule 1f1b, balanced");
  CHECK(rows[2] == "    0      0       2          2           6");
  CHECK(rows[5] == "partition = [2, 2]");
  // 3 GB: stage 0 holds 2 microbatches of 1 GB per layer, so one layer.
  o = run(ppsim::cli::run_partition, {costs.path, "--stages", "2", "--memory", "3GB"});
  rows = lines(o.out);
  CHECK(rows[4] == "bottleneck 9 ms");
  CHECK(rows[5] == "partition = [1, 3]");
  // Remat-aware: stage 0 drops the attention cores of its two layers and hides their 0.5 ms each
  // in the windows, so [2, 2] costs nothing extra.
  o = run(ppsim::cli::run_partition, {costs.path, "--stages", "2", "--memory", "3GB", "--mode",
                                      "remat-aware", "--tp", "4", "--format", "json"});
  CHECK(o.out ==
        "{\"mode\": \"remat-aware\", \"schedule\": \"1f1b\", \"layers_per_stage\": [2, 2], "
        "\"stage_ms\": [6, 6], \"bottleneck_ms\": 6}\n");
}

TEST_CASE("ppsim lynx: on demand vs HEU vs MILP per stage and overall") {
  const CostFixture costs;
  const Output o =
      run(ppsim::cli::run_lynx, {costs.path, "--stages", "2", "--memory", "3GB", "--tp", "4"});
  CHECK(o.code == 0);
  const std::vector<std::string> rows = lines(o.out);
  REQUIRE(rows.size() == 5);
  CHECK(rows[0] == "reconstructed Lynx (docs/lynx.md): schedule 1f1b, layers [2, 2], tp 4");
  // Stage 0 drops two attention cores: 1 ms on demand, hidden in the windows by HEU and MILP.
  CHECK(rows[2] ==
        "      0       2          2        2           6             1           0           0");
  CHECK(rows[3] ==
        "      1       2          1        0           6             0           0           0");
  CHECK(rows[4] ==
        "overall       4                               6             7           6           6");
}

TEST_CASE("issue_31 ppsim lynx --format json: the table's cells, unrounded") {
  const CostFixture costs;
  const Output o = run(ppsim::cli::run_lynx, {costs.path, "--stages", "2", "--memory", "3GB",
                                             "--tp", "4", "--format", "json"});
  CHECK(o.code == 0);
  CHECK(o.out ==
        "{\"schedule\": \"1f1b\", \"layers_per_stage\": [2, 2], \"tp\": 4, \"bubbles_ms\": null, "
        "\"stages\": [{\"stage\": 0, \"layers\": 2, \"in_flight\": 2, \"dropped\": 2, "
        "\"compute_ms\": 6, \"on_demand_ms\": 1, \"heu_ms\": 0, \"milp_ms\": 0}, {\"stage\": 1, "
        "\"layers\": 2, \"in_flight\": 1, \"dropped\": 0, \"compute_ms\": 6, \"on_demand_ms\": 0, "
        "\"heu_ms\": 0, \"milp_ms\": 0}], \"overall\": {\"layers\": 4, \"compute_ms\": 6, "
        "\"on_demand_ms\": 7, \"heu_ms\": 6, \"milp_ms\": 6}}\n");
}

TEST_CASE("ppsim lynx --microbatches: the pipeline bubble measured in a first simulation") {
  // [2, 2] layers under 1F1B with m = 4: stage 0 (F = 2, BW = 4) waits 1.5 ms on average before
  // its backwards (engine_test), stage 1 never. With a near-free P2P link the pipeline window is
  // that bubble alone: 1.5 ms hides stage 0's 1 ms of attention recomputation, which is exposed
  // when the bubble is taken as 0.
  const CostFixture costs;
  const Args base{costs.path, "--stages", "2", "--memory", "3GB", "--p2p-bandwidth", "1e6"};
  Args measured = base;
  measured.insert(measured.end(), {"--microbatches", "4"});
  Output o = run(ppsim::cli::run_lynx, measured);
  REQUIRE(o.code == 0);
  std::vector<std::string> rows = lines(o.out);
  REQUIRE(rows.size() == 6);
  CHECK(rows[1] == "bubble before each backward, measured over 4 microbatches: [1.5, 0] ms");
  CHECK(rows[3] ==
        "      0       2          2        2           6             1           0           0");
  o = run(ppsim::cli::run_lynx, base);
  rows = lines(o.out);
  REQUIRE(rows.size() == 5);
  CHECK(rows[2] ==
        "      0       2          2        2           6             1      0.9999      0.9999");

  Args bad = base;
  bad.insert(bad.end(), {"--microbatches", "4", "--schedule", "v-half"});
  o = run(ppsim::cli::run_lynx, bad);
  CHECK(o.code == 1);
  CHECK(o.err == "ppsim: error: field '--microbatches': a first run needs one stage per device; "
                 "'v-half' places several\n");
}

TEST_CASE("ppsim lynx and partition errors") {
  const CostFixture costs;
  // No stage fits even recomputing everything: one line, no table (it would be all '-').
  Output o = run(ppsim::cli::run_lynx, {costs.path, "--stages", "2", "--memory", "0.1GB"});
  CHECK(o.code == 1);
  CHECK(o.out.empty());
  CHECK(
      o.err ==
      "ppsim: error: field '--memory': 0.1GB is below what every stage holds with every activation "
      "recomputed (the least is stage 1: 1.024 GiB)\n");
  // One stage that does not fit is a row of '-', the other still solved.
  o = run(ppsim::cli::run_lynx, {costs.path, "--stages", "2", "--memory", "1.1GiB"});
  CHECK(o.code == 0);
  CHECK(lines(o.out)[2].find("   -   ") != std::string::npos); // HEU fits nothing in stage 0
  o = run(ppsim::cli::run_lynx, {costs.path, "--stages", "2", "--layers-per-stage", "1,x"});
  CHECK(o.code == 1);
  CHECK(o.err ==
        "ppsim: error: field '--layers-per-stage': expected comma-separated counts, got \"1,x\"\n");
  o = run(ppsim::cli::run_lynx, {costs.path, "--stages", "2", "--layers-per-stage", "4"});
  CHECK(o.err == "ppsim: error: field '--layers-per-stage': expected 2 counts, got 1\n");
  o = run(ppsim::cli::run_partition, {costs.path, "--stages", "2", "--schedule", "zb-h22"});
  CHECK(o.err ==
        "ppsim: error: field '--schedule': unknown schedule 'zb-h22', did you mean 'zb-h2'?\n");
  o = run(ppsim::cli::run_partition, {costs.path, "--stages", "2", "--schedule", "gpipe"});
  CHECK(o.err == "ppsim: error: field '--schedule': schedule 'gpipe' has no in-flight count "
                 "formula; --microbatches M "
                 "measures it on a "
                 "first run\n");
  // Measured: GPipe holds all m microbatches on both stages, so m = 1 fits [2, 2] in 3 GB and
  // m = 2 fits no split.
  o = run(ppsim::cli::run_partition, {costs.path, "--stages", "2", "--schedule", "gpipe",
                                      "--microbatches", "1", "--memory", "3GB"});
  CHECK(o.code == 0);
  CHECK(lines(o.out)[2] == "    0      0       2          1           6");
  CHECK(lines(o.out)[5] == "partition = [2, 2]");
  o = run(ppsim::cli::run_partition, {costs.path, "--stages", "2", "--schedule", "gpipe",
                                      "--microbatches", "2", "--memory", "3GB"});
  // The DP ran through before it found no split: its lines come first.
  CHECK(o.err == "ppsim: partition: 1/2 stages\nppsim: partition: 2/2 stages\n"
                 "ppsim: error: no split of 4 layers into 2 stages fits 2.794 GiB per device\n");
  o = run(ppsim::cli::run_partition, {costs.path, "--stages", "2", "--memory", "1GB", "-q"});
  CHECK(o.err == "ppsim: error: no split of 4 layers into 2 stages fits 953.7 MiB per device\n");
  o = run(ppsim::cli::run_partition, {costs.path, "--stages", "2", "--tp-bandwidth", "0"});
  CHECK(o.err == "ppsim: error: field '--tp-bandwidth': expected a positive bandwidth, got 0\n");
}

TEST_CASE("scenario key model.partition: the DP's split, an explicit list, one-line errors") {
  const CostFixture costs;
  const auto stage_forward = [&](const std::string &model_lines, const std::string &cluster_lines) {
    const ppsim::RunInput input =
        ppsim::parse_scenario("[model]\ncosts_file = \"" + costs.path + "\"\n" + model_lines +
                                  "[cluster]\ndevices = 2\n" + cluster_lines,
                              "s.toml", ".");
    const ppsim::PreparedRun run = ppsim::prepare_policy_run(input);
    std::vector<double> forward;
    for (const auto &stage : run.scenario.stage_costs)
      forward.push_back(run.scenario.time_scale.to_units(stage.forward));
    return forward;
  };
  // Even split, then the DP under 3 GB per device (as `ppsim partition --memory 3GB`: [1, 3]).
  CHECK(stage_forward("", "") == std::vector<double>{2, 2});
  CHECK(stage_forward("partition = \"balanced\"\n", "memory = 3e9\n") == std::vector<double>{1, 3});
  CHECK(stage_forward("partition = [3, 1]\n", "") == std::vector<double>{3, 1});
  // In-flight counts come from the schedule itself: GPipe holds all m microbatches on every
  // device, so with m = 1 the time-balanced [2, 2] fits 3 GB, with m = 2 nothing does.
  CHECK(stage_forward("partition = \"balanced\"\n",
                      "memory = 3e9\n[pipeline]\nschedule = \"gpipe\"\n"
                      "microbatches = 1\n") == std::vector<double>{2, 2});

  const auto error_of = [&](const std::string &model_lines, const std::string &rest) {
    return ppsim::testing::error_message([&] {
      (void)ppsim::prepare_policy_run(ppsim::parse_scenario(model_lines + rest, "s.toml", "."));
    });
  };
  const std::string with_costs = "[model]\ncosts_file = \"" + costs.path + "\"\n";
  CHECK(error_of("[model]\npartition = \"balanced\"\n", "") ==
        "s.toml:2: field 'model.partition': needs model.costs_file, the per-layer costs to split");
  CHECK(error_of(with_costs + "partition = \"balanced\"\nlayers_per_stage = [2, 2]\n",
                 "[cluster]\ndevices = 2\n") ==
        "s.toml:3: field 'model.partition': is given twice: model.layers_per_stage already splits "
        "the layers");
  CHECK(error_of(with_costs + "partition = \"remat-aware\"\n",
                 "[cluster]\ndevices = 2\n[pipeline]\nschedule = \"zb-v\"\n") ==
        "s.toml:3: field 'model.partition': splits the layers into one stage per device; schedule "
        "'zb-v' places "
        "several on a device (give model.layers_per_stage)");
  CHECK(error_of(with_costs + "partition = \"balanced\"\n",
                 "[cluster]\ndevices = 2\nmemory = 1e9\n") ==
        "s.toml:3: field 'model.partition': no split of 4 layers into 2 stages fits 953.7 MiB per "
        "device");
  CHECK(error_of(with_costs + "partition = \"balanced\"\n",
                 "[cluster]\ndevices = 2\nmemory = 3e9\n[pipeline]\nschedule = "
                 "\"gpipe\"\nmicrobatches = 2\n") ==
        "s.toml:3: field 'model.partition': no split of 4 layers into 2 stages fits 2.794 GiB per "
        "device");
  CHECK(error_of(with_costs + "partition = \"best\"\n", "") ==
        "s.toml:3: field 'model.partition': expected one of cost, even, balanced, remat-aware, got "
        "\"best\"");
}
