// NDJSON event dump and replay (docs/profiler.md, "Event dumps"): a dumped trace replays through
// attribution and statistics to the same numbers.
#include "profiler/event_dump.h"

#include "base/error.h"
#include "base/text_file.h"
#include "costs/cost_file.h"
#include "profiler/attribution.h"
#include "profiler/stats.h"

#include <doctest/doctest.h>

namespace ppsim::profiler {
namespace {

DecodedActivity sample() {
  DecodedActivity activity;
  const PhaseId forward{Pass::forward, 1, 0, 2};
  activity.links.push_back({5, pack_phase_id(forward), kPpsimExternalKind});
  activity.gpu.push_back(
      {GpuActivityKind::kernel, 100, 180, 0, 7, 5, 0, 0, activity.names.intern("gemm")});
  activity.gpu.push_back({GpuActivityKind::memcpy, 150, 200, 0, 8, 5, 0, 4096, 0});
  activity.gpu.push_back(
      {GpuActivityKind::kernel, 300, 310, 0, 7, 9, 3, 0, activity.names.intern("softmax \"x\"")});
  activity.api_calls.push_back({true, 307, 90, 95, 11, 5});
  activity.records = 6;
  activity.dropped_records = 2;
  activity.zero_timestamp_kernels = 1;
  return activity;
}

} // namespace

TEST_CASE("dump and replay give the same attribution") {
  const DecodedActivity original = sample();
  const std::string text = write_events_ndjson(original);
  CHECK(text.rfind("{\"type\":\"gpu\",\"kind\":\"kernel\",\"start\":100,\"end\":180,", 0) == 0);
  const DecodedActivity replayed = read_events_ndjson(text, "trace.ndjson");
  REQUIRE(replayed.gpu.size() == 3);
  CHECK(replayed.names.text(replayed.gpu[2].name_id) == "softmax \"x\"");
  CHECK(replayed.gpu[1].bytes == 4096);
  CHECK(replayed.gpu[2].graph_id == 3);
  CHECK(replayed.api_calls.size() == 1);
  CHECK(replayed.api_calls[0].driver);
  CHECK(replayed.dropped_records == 2);
  CHECK(replayed.zero_timestamp_kernels == 1);
  const Attribution before = attribute(original);
  const Attribution after = attribute(replayed);
  REQUIRE(after.phases.size() == 1);
  CHECK(after.phases[0].busy_union_ns == before.phases[0].busy_union_ns);
  CHECK(after.phases[0].busy_union_ns == 100);
  CHECK(after.phases[0].copy_bytes == 4096);
  CHECK(after.unattributed_busy_ns == 10);
  CHECK(write_events_ndjson(replayed) == text);
}

TEST_CASE("a number beyond a double is one error naming the line") {
  // Found by scripts/fuzz: a float where an integer belongs was converted with undefined behaviour.
  CHECK_THROWS_WITH_AS(
      read_events_ndjson("{\"type\":\"gpu\",\"kind\":\"memcpy\",\"start\":1.86667e+23}\n",
                         "t.ndjson"),
      "t.ndjson:1: field 'start': expected an integer in range, got 1.86667e+23", Error);
  CHECK_THROWS_WITH_AS(read_events_ndjson("{\"type\":\"gpu\",\"start\":1e400}\n", "t.ndjson"),
                       "t.ndjson:1: a number is out of range (it must fit a double)", Error);
}

TEST_CASE("malformed lines name the line and field") {
  CHECK_THROWS_WITH_AS(read_events_ndjson("\n{\"type\":\"gpu\",\"kind\":\"kernel\"}\n", "t.ndjson"),
                       "t.ndjson:2: field 'name': missing", Error);
  CHECK_THROWS_WITH_AS(read_events_ndjson("{\"type\":\"marker\"}\n", "t.ndjson"),
                       "t.ndjson:1: field 'type': unknown event type 'marker'", Error);
  CHECK_THROWS_WITH_AS(read_events_ndjson("not json\n", "t.ndjson"),
                       "t.ndjson:1: expected one JSON object per line", Error);
  CHECK_THROWS_WITH_AS(
      read_events_ndjson(
          "{\"type\":\"link\",\"correlation\":\"x\",\"external_id\":1,\"external_kind\":3}",
          "t.ndjson"),
      "t.ndjson:1: field 'correlation': expected an integer in range, got \"x\"", Error);
}

} // namespace ppsim::profiler

namespace ppsim::profiler {

// A trace from a real GPU (docs/profiler.md, "Event dumps"): `ppsim profile --events` on an H100
// wrote the decoded CUPTI events and, from the same run, the measured cost file. Replaying the
// events through attribution and statistics must give that file's times exactly.
TEST_CASE("an H100 trace replays to the times measured in the same run") {
  const std::string folder = PPSIM_SOURCE_DIR "/tests/profiler/traces/";
  const DecodedActivity activity = read_events_ndjson(
      read_text_file(folder + "h100_gpt_block.ndjson", "events"), "h100_gpt_block.ndjson");
  const CostFile measured = read_cost_file(folder + "h100_gpt_block.json");
  REQUIRE(measured.rows.size() == 2);
  REQUIRE(measured.metadata.device.find("H100") != std::string::npos);
  const Attribution attribution = attribute(activity);
  // The setup kernels and copies outside every phase, as the run reported them.
  CHECK(static_cast<double>(attribution.unattributed_busy_ns) / 1e6 ==
        doctest::Approx(measured.metadata.unattributed_kernel_ms).epsilon(1e-12));
  std::vector<CostRow> replayed = measured.rows;
  apply_measurements(replayed, summarize_passes(attribution.phases, measured.metadata.warmup),
                     "cupti");
  const auto same = [](Rational a, Rational b) { return normalized(a) == normalized(b); };
  for (std::size_t i = 0; i < replayed.size(); ++i) {
    const CostRow &want = measured.rows[i];
    const CostRow &got = replayed[i];
    CAPTURE(i);
    CHECK(Rational{} < want.fwd_ms);
    CHECK(Rational{} < want.bwd_input_ms);
    CHECK(Rational{} < want.bwd_weight_ms);
    CHECK(same(got.fwd_ms, want.fwd_ms));
    CHECK(same(got.bwd_input_ms, want.bwd_input_ms));
    CHECK(same(got.bwd_weight_ms, want.bwd_weight_ms));
    CHECK(same(got.bwd_total_ms, want.bwd_total_ms));
    CHECK(same(got.recompute_ms, want.recompute_ms));
    CHECK(same(got.fwd_ms_p90, want.fwd_ms_p90));
    CHECK(got.n_samples == want.n_samples);
  }
}

} // namespace ppsim::profiler
