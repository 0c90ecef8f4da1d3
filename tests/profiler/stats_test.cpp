// Repetition statistics and measured rows (docs/profiler.md, "How measurement works").
#include "profiler/stats.h"

#include <doctest/doctest.h>

#include <map>

namespace ppsim::profiler {
namespace {

PhaseMetrics metrics(Pass pass, std::uint16_t layer, std::uint16_t repetition, std::uint64_t busy,
                     std::uint16_t microbatch = 0) {
  PhaseMetrics phase;
  phase.phase = {pass, layer, microbatch, repetition};
  phase.busy_union_ns = busy;
  phase.span_ns = busy + 10 * repetition;
  return phase;
}

} // namespace

TEST_CASE("median, p10 and p90 of repetitions, exactly in milliseconds") {
  // 1..10 us: median (5 + 6) / 2 = 5.5 us; nearest rank p10 = 1st = 1 us, p90 = 9th = 9 us.
  std::vector<std::uint64_t> samples;
  for (std::uint64_t i = 10; i >= 1; --i)
    samples.push_back(i * 1000);
  const TimeSummary summary = summarize_ns(samples);
  CHECK(summary.samples == 10);
  CHECK(summary.median_ms == Rational{11, 2000});
  CHECK(summary.p10_ms == Rational{1, 1000});
  CHECK(summary.p90_ms == Rational{9, 1000});
  const TimeSummary odd = summarize_ns({3000, 1000, 2000});
  CHECK(odd.median_ms == Rational{1, 500});
  CHECK(odd.p10_ms == Rational{1, 1000});
  CHECK(odd.p90_ms == Rational{3, 1000});
  CHECK(summarize_ns({7}).median_ms == Rational{7, 1000000});
}

TEST_CASE("warm-up repetitions are discarded and microbatches pooled per (layer, pass)") {
  std::vector<PhaseMetrics> phases;
  phases.push_back(metrics(Pass::forward, 0, 0, 999'000)); // cold: lazy loading
  phases.push_back(metrics(Pass::forward, 0, 1, 888'000));
  for (std::uint16_t rep = 2; rep < 5; ++rep) {
    phases.push_back(metrics(Pass::forward, 0, rep, 1000 * rep, 0));
    phases.push_back(metrics(Pass::forward, 0, rep, 1000 * rep + 500, 1));
  }
  phases.push_back(metrics(Pass::backward_input, 1, 3, 4000));
  const auto passes = summarize_passes(phases, 2);
  REQUIRE(passes.size() == 2);
  CHECK(passes[0].layer == 0);
  CHECK(passes[0].pass == Pass::forward);
  CHECK(passes[0].busy.samples == 6);
  CHECK(passes[0].busy.median_ms == Rational{13, 4000}); // (3000 + 3500) / 2 ns
  CHECK(passes[0].busy.p90_ms == Rational{9, 2000});     // 4500 ns
  CHECK(passes[0].span_minus_busy_ns == 40);
  CHECK(passes[1].layer == 1);
  CHECK(passes[1].busy.median_ms == Rational{1, 250});
}

TEST_CASE("measurements replace the modelled times and keep the bytes") {
  std::vector<CostRow> rows(2);
  rows[0].layer_id = 0;
  rows[1].layer_id = 1;
  rows[1].activation_bytes_full = 123;
  std::vector<PhaseMetrics> phases;
  for (std::uint16_t rep = 0; rep < 3; ++rep) {
    phases.push_back(metrics(Pass::forward, 1, rep, 2000 + rep));
    phases.push_back(metrics(Pass::backward_input, 1, rep, 3000));
    phases.push_back(metrics(Pass::backward_weight, 1, rep, 1000));
    phases.push_back(metrics(Pass::backward_total, 1, rep, 3900));
    phases.push_back(metrics(Pass::recompute_full, 1, rep, 2100));
    phases.push_back(metrics(Pass::recompute_selective, 1, rep, 300));
  }
  phases.push_back(metrics(Pass::forward, 9, 0, 1)); // a layer without a row is ignored
  apply_measurements(rows, summarize_passes(phases, 0), "cupti");
  const CostRow &row = rows[1];
  CHECK(row.fwd_ms == Rational{2001, 1000000});
  CHECK(row.fwd_ms_p10 == Rational{1, 500});
  CHECK(row.fwd_ms_p90 == Rational{1001, 500000});
  CHECK(row.bwd_input_ms == Rational{3, 1000});
  CHECK(row.bwd_weight_ms == Rational{1, 1000});
  CHECK(row.bwd_total_ms == Rational{39, 10000});
  CHECK(row.recompute_ms == Rational{21, 10000});
  CHECK(row.recompute_selective_ms == Rational{3, 10000});
  CHECK(row.n_samples == 3);
  CHECK(row.source == "cupti");
  CHECK(row.activation_bytes_full == 123);
  CHECK(rows[0].source == "synthetic");
}

TEST_CASE(
    "run-time warnings: dropped records, zero timestamps, unattributed time, recompute drift") {
  DecodedActivity activity;
  activity.dropped_records = 4;
  Attribution attribution;
  attribution.zero_timestamp_activities = 2;
  attribution.attributed_busy_ns = 980;
  attribution.unattributed_busy_ns = 20;
  std::vector<CostRow> rows(1);
  rows[0].fwd_ms = {1, 1};
  rows[0].recompute_ms = {6, 5};
  const auto warnings = measurement_warnings(activity, attribution, rows);
  REQUIRE(warnings.size() == 4);
  CHECK(warnings[0] == "CUPTI dropped 4 records; raise the buffer size or flush more often");
  CHECK(warnings[1] == "2 kernels have no timestamps (CUPTI device buffers exhausted); raise "
                       "CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE");
  CHECK(warnings[2] == "2.0% of GPU time is not attributed to any phase");
  CHECK(warnings[3] == "layer 0: recompute_ms 1.2 is more than 15% off fwd_ms 1");
  attribution.unattributed_busy_ns = 5; // 0.5%: below the 1% threshold
  activity.dropped_records = 0;
  attribution.zero_timestamp_activities = 0;
  rows[0].recompute_ms = {11, 10};
  CHECK(measurement_warnings(activity, attribution, rows).empty());
}

TEST_CASE(
    "the injection library writes the layers and passes it measured, and leaves the rest absent") {
  // A stock PyTorch script marks the forward and the whole backward of layers 4 and 5 (the
  // layers this rank owns); layer 5's backward range is missing.
  const auto pass = [](std::uint16_t layer, Pass kind, std::int64_t us) {
    PassSummary summary;
    summary.layer = layer;
    summary.pass = kind;
    summary.busy = TimeSummary{{us, 1000}, {us, 1000}, {us, 1000}, 3};
    return summary;
  };
  const CostFile file =
      injected_cost_file({pass(4, Pass::forward, 1250), pass(4, Pass::backward_total, 2500),
                          pass(5, Pass::forward, 1300)},
                         "cupti");
  REQUIRE(file.rows.size() == 2);
  CHECK(file.rows[0].layer_id == 4);
  CHECK(file.rows[1].layer_id == 5);
  CHECK(write_cost_csv(file) ==
        "schema_version,layer_id,layer_name,layer_type,fwd_ms,bwd_total_ms,fwd_ms_p10,"
        "fwd_ms_p90,n_samples,source\n"
        "1,4,layer4,measured,1.25,2.5,1.25,1.25,3,cupti\n"
        "1,5,layer5,measured,1.3,,1.3,1.3,3,cupti\n");
  CHECK(
      file.metadata.warnings ==
      std::vector<std::string>{"layer 5 has no BW range: its bwd_total_ms is left empty (absent)"});
  // The warnings reach stderr (a CSV file has no metadata to carry them).
  CHECK(
      warning_lines(file, "ppsim inject") ==
      "ppsim inject: warning: layer 5 has no BW range: its bwd_total_ms is left empty (absent)\n");
  // The empty cell reads back absent: kept absent for merge, in JSON a missing key.
  const CostFile back = parse_cost_csv(write_cost_csv(file), "rank.csv", LayerIds::ascending,
                                       Required::absent_allowed);
  CHECK(back.rows[1].absent_columns == std::vector<std::string>{"bwd_total_ms"});
  CHECK(write_cost_csv(back) == write_cost_csv(file));
  CHECK(write_cost_json(file).find("\"bwd_total_ms\"") ==
        write_cost_json(file).rfind("\"bwd_total_ms\""));
  // A forward missing where other layers have one: empty fwd_ms cells, which a model refuses.
  const CostFile no_forward =
      injected_cost_file({pass(0, Pass::forward, 1000), pass(0, Pass::backward_input, 1000),
                          pass(0, Pass::backward_weight, 1000), pass(1, Pass::backward_input, 1000),
                          pass(1, Pass::backward_weight, 1000)},
                         "cupti");
  CHECK(write_cost_csv(no_forward).find("\n1,1,layer1,measured,,1,1,,,1,1,1,1,0,cupti\n") !=
        std::string::npos);
  CHECK_THROWS_WITH(parse_cost_csv(write_cost_csv(no_forward), "model.csv"),
                    "model.csv:3: field 'fwd_ms': layer 1 has no value (an empty cell: not "
                    "measured); a simulation "
                    "needs one");
  // B and W were not measured: absent, so the reader takes the file as measuring the whole
  // backward only (B = BW, W = 0, for fused schedules; issue 30) instead of running B = W = 0.
  CostFile from_zero = injected_cost_file(
      {pass(0, Pass::forward, 1000), pass(0, Pass::backward_total, 2000)}, "cupti");
  const CostFile fused = parse_cost_csv(write_cost_csv(from_zero), "rank0.csv");
  CHECK(fused.fused_only());
  CHECK(fused.rows[0].bwd_input_ms == Rational{2, 1});
  // The JSON form writes the same columns.
  CHECK(write_cost_json(from_zero).find("bwd_input_ms") == std::string::npos);
}

} // namespace ppsim::profiler

namespace ppsim::profiler {

TEST_CASE(
    "injection: activation bytes from allocation records where every kept forward allocated") {
  // Layers 0 and 1, three repetitions of F and B; repetition 0 is the warm-up.
  const auto phase = [](std::uint16_t layer, Pass pass, std::uint16_t repetition,
                        std::uint32_t allocations, std::int64_t bytes) {
    PhaseMetrics metrics;
    metrics.phase = PhaseId{pass, layer, 0, repetition};
    metrics.busy_union_ns = metrics.span_ns = metrics.kernel_sum_ns = 1000 * (layer + 1);
    metrics.n_kernels = 1;
    metrics.allocations = allocations;
    metrics.allocated_bytes = bytes;
    return metrics;
  };
  Attribution attribution;
  for (std::uint16_t r = 0; r < 3; ++r) {
    // Layer 0 keeps 1 MiB (the warm-up kept 9 MiB); layer 1 keeps 2, 3 MiB: median of two is the
    // upper.
    attribution.phases.push_back(phase(0, Pass::forward, r, 1, r == 0 ? 9 << 20 : 1 << 20));
    attribution.phases.push_back(phase(0, Pass::backward_input, r, 0, -(1 << 20)));
    attribution.phases.push_back(phase(1, Pass::forward, r, 2, (r + 1) << 20));
    attribution.phases.push_back(phase(1, Pass::backward_input, r, 0, 0));
  }
  const CostFile file = injection_cost_file(attribution, DecodedActivity{}, 1);
  REQUIRE(file.rows.size() == 2);
  CHECK(file.rows[0].activation_bytes_full == 1 << 20);
  CHECK(file.rows[1].activation_bytes_full == 3 << 20);
  CHECK(file.metadata.timer == "cupti");
  CHECK(write_cost_csv(file).find(",activation_bytes_full,") != std::string::npos);
  CHECK(file.metadata.warnings.empty()); // no recompute warning: R was not measured

  // A caching allocator (PyTorch's): only the warm-up forward allocated. No evidence after it: the
  // column is absent, silently.
  Attribution cached = attribution;
  for (PhaseMetrics &metrics : cached.phases)
    if (metrics.phase.repetition > 0)
      metrics.allocations = 0, metrics.allocated_bytes = 0;
  const CostFile absent = injection_cost_file(cached, DecodedActivity{}, 1);
  CHECK(write_cost_csv(absent).find("activation_bytes_full") == std::string::npos);
  CHECK(absent.metadata.warnings.empty());
  // Some kept forwards allocated and some did not: not a measurement of what the layer keeps.
  cached.phases[4].allocations = 1; // layer 0, repetition 1
  const CostFile mixed = injection_cost_file(cached, DecodedActivity{}, 1);
  CHECK(write_cost_csv(mixed).find("activation_bytes_full") == std::string::npos);
  CHECK(mixed.metadata.warnings ==
        std::vector<std::string>{"layer 0: 1 of 2 forwards allocated (a caching allocator?): "
                                 "activation_bytes_full left absent"});
  // One layer measured, the other without any allocating forward: absent, with a warning.
  Attribution partial = attribution;
  for (PhaseMetrics &metrics : partial.phases)
    if (metrics.phase.layer == 1)
      metrics.allocations = 0;
  const CostFile one_layer = injection_cost_file(partial, DecodedActivity{}, 1);
  CHECK(write_cost_csv(one_layer).find("activation_bytes_full") == std::string::npos);
  CHECK(one_layer.metadata.warnings ==
        std::vector<std::string>{"layer 1 has no CUPTI allocation records in its forward: "
                                 "activation_bytes_full left absent"});
}

TEST_CASE("each launcher rank writes its own cost file") {
  const auto environment = [](std::map<std::string, std::string> values) {
    return [values](const char *name) -> const char * {
      const auto found = values.find(name);
      return found == values.end() ? nullptr : found->second.c_str();
    };
  };
  CHECK(launcher_rank(environment({})) == std::nullopt);
  CHECK(launcher_rank(environment({{"RANK", "3"}, {"SLURM_PROCID", "9"}})) == 3);
  CHECK(launcher_rank(environment({{"OMPI_COMM_WORLD_RANK", "5"}})) == 5);
  CHECK(launcher_rank(environment({{"RANK", "x"}, {"PMI_RANK", "2"}})) == 2);
  CHECK(rank_cost_path("ppsim_costs.csv", std::nullopt) == "ppsim_costs.csv");
  CHECK(rank_cost_path("ppsim_costs.csv", 3) == "ppsim_costs.rank3.csv");
  CHECK(rank_cost_path("out/costs.json", 12) == "out/costs.rank12.json");
  CHECK(rank_cost_path("out.d/costs", 1) == "out.d/costs.rank1");
  CHECK(rank_cost_path("costs_{rank}.csv", 7) == "costs_7.csv");
}

} // namespace ppsim::profiler
