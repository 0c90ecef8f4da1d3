// The GPU runner's plan without a GPU (docs/profiler.md, "How measurement works"): phase orders of
// the two modes, where it synchronises, and CUDA-event timings flowing into the same statistics as
// CUPTI's.
#include "base/index.h"
#include "profiler/run_plan.h"

#include "base/error.h"
#include "profiler/stats.h"

#include <algorithm>
#include <doctest/doctest.h>
#include <fmt/format.h>

namespace ppsim::profiler {
namespace {

std::string codes(const std::vector<PhaseStep> &steps) {
  std::string text;
  for (const PhaseStep &step : steps)
    text += fmt::format("{}{} ", pass_code(step.pass), step.layer);
  return text;
}

// Replays a plan against GpuBlock's stash contract (gpu_block.h): F and R_full make the stash
// live, R_sel needs it, B and BW consume it (B leaves the W stash), W consumes the W stash.
// Returns the largest number of stashes live at once, or -1 at the first step that breaks it.
int replay_stashes(RunMode mode, int layers, int repetitions) {
  std::vector<bool> stash(ppsim::at(blocks_needed(mode, layers)), false);
  std::vector<bool> weight_stash(stash.size(), false);
  int most = 0;
  for (int rep = 0; rep < repetitions; ++rep) {
    for (const PhaseStep &step : phase_order(mode, layers)) {
      const auto b = ppsim::at(block_index(mode, step));
      if (b >= stash.size())
        return -1;
      switch (step.pass) {
      case Pass::forward:
      case Pass::recompute_full:
        stash[b] = true;
        break;
      case Pass::recompute_selective:
        if (!stash[b])
          return -1;
        break;
      case Pass::backward_input:
        if (!stash[b])
          return -1;
        stash[b] = false;
        weight_stash[b] = true;
        break;
      case Pass::backward_weight:
        if (!weight_stash[b])
          return -1;
        weight_stash[b] = false;
        break;
      case Pass::backward_total:
        if (!stash[b])
          return -1;
        stash[b] = false;
        break;
      }
      most = std::max(most, static_cast<int>(std::count(stash.begin(), stash.end(), true)));
    }
  }
  return most;
}

} // namespace

TEST_CASE("both modes keep the GPU block's stash contract, repetition after repetition") {
  for (const int layers : {1, 2, 5}) {
    CAPTURE(layers);
    // Isolated: one block, one stash at a time. Sequence: every layer's stash live after the
    // forwards, as in one microbatch of 1F1B.
    CHECK(replay_stashes(RunMode::isolated, layers, 3) == 1);
    CHECK(replay_stashes(RunMode::sequence, layers, 3) == layers);
  }
  CHECK(blocks_needed(RunMode::isolated, 4) == 1);
  CHECK(blocks_needed(RunMode::sequence, 4) == 4);
  CHECK(block_index(RunMode::sequence, {Pass::backward_weight, 3}) == 3);
  CHECK(block_index(RunMode::isolated, {Pass::backward_weight, 3}) == 0);
}

TEST_CASE("isolated mode: every pass of a layer, layer by layer, synchronised around each") {
  CHECK(codes(phase_order(RunMode::isolated, 2)) == "F0 B0 W0 R0 RS0 BW0 F1 B1 W1 R1 RS1 BW1 ");
  CHECK(synchronizes_each_phase(RunMode::isolated));
}

TEST_CASE("sequence mode: one microbatch as 1F1B runs it, forwards up, backwards down") {
  CHECK(codes(phase_order(RunMode::sequence, 3)) ==
        "F0 F1 F2 B2 W2 R2 RS2 BW2 B1 W1 R1 RS1 BW1 B0 W0 R0 RS0 BW0 ");
  CHECK_FALSE(synchronizes_each_phase(RunMode::sequence));
  // Both modes time the same phases, so every cost column is measured either way.
  for (const int layers : {1, 4}) {
    auto isolated = phase_order(RunMode::isolated, layers);
    auto sequence = phase_order(RunMode::sequence, layers);
    const auto key = [](const PhaseStep &a, const PhaseStep &b) {
      return std::pair(a.layer, a.pass) < std::pair(b.layer, b.pass);
    };
    std::sort(isolated.begin(), isolated.end(), key);
    std::sort(sequence.begin(), sequence.end(), key);
    CHECK(isolated == sequence);
    CHECK(isolated.size() == ppsim::at(6 * layers));
  }
}

TEST_CASE("mode and timer names round-trip; others are one-line errors naming the option") {
  for (const char *name : {"isolated", "sequence"})
    CHECK(run_mode_name(parse_run_mode(name)) == name);
  for (const char *name : {"cupti", "cuda-events"})
    CHECK(phase_timer_name(parse_phase_timer(name)) == name);
  CHECK_THROWS_WITH_AS(parse_run_mode("overlapped"),
                       "field 'mode': expected isolated or sequence, got \"overlapped\"", Error);
  CHECK_THROWS_WITH_AS(parse_phase_timer("nvml"),
                       "field 'timer': expected cupti or cuda-events, got \"nvml\"", Error);
}

TEST_CASE("CUDA-event timings feed the CUPTI statistics: medians after warm-up, in exact ms") {
  // Layer 0 forward over 1 warm-up and 3 kept repetitions: 9 ms (cold), then 2, 4, 3 ms; the
  // median of the kept ones is 3 ms, p10 2 ms, p90 4 ms. A sub-microsecond part survives
  // (0.0005 ms = 500 ns).
  std::vector<EventTiming> timings;
  const float forward[] = {9.0f, 2.0f, 4.0f, 3.0f};
  for (std::uint16_t rep = 0; rep < 4; ++rep)
    timings.push_back({PhaseId{Pass::forward, 0, 0, rep}, forward[rep]});
  timings.push_back({PhaseId{Pass::backward_input, 0, 0, 1}, 0.0005f});
  const std::vector<PhaseMetrics> phases = phase_metrics_from_events(timings);
  REQUIRE(phases.size() == 5);
  CHECK(phases[1].busy_union_ns == 2'000'000);
  CHECK(phases[1].span_ns == phases[1].busy_union_ns);
  CHECK(phases[4].busy_union_ns == 500);
  const std::vector<PassSummary> summary = summarize_passes(phases, 1);
  REQUIRE(summary.size() == 2);
  CHECK(summary[0].pass == Pass::forward);
  CHECK(summary[0].busy.median_ms == Rational{3, 1});
  CHECK(summary[0].busy.p10_ms == Rational{2, 1});
  CHECK(summary[0].busy.p90_ms == Rational{4, 1});
  CHECK(summary[0].busy.samples == 3);
  CHECK(summary[0].span_minus_busy_ns == 0);
  CHECK(summary[1].busy.median_ms == Rational{1, 2000});

  std::vector<CostRow> rows(1);
  apply_measurements(rows, summary, "cuda_events");
  CHECK(rows[0].fwd_ms == Rational{3, 1});
  CHECK(rows[0].bwd_input_ms == Rational{1, 2000});
  CHECK(rows[0].source == "cuda_events");
}

TEST_CASE("the arena's measured workspaces replace the analytic transient peaks") {
  std::vector<CostRow> rows(2);
  for (CostRow &row : rows)
    row.bwd_weight_peak_temp_bytes = 7; // W not measured: kept
  std::map<Pass, PhaseBytes> measured;
  measured[Pass::forward].peak_temp_bytes = 4096;        // fp32 scores
  measured[Pass::backward_input].peak_temp_bytes = 9216; // their gradients in fp32 and bf16
  measured[Pass::recompute_full].peak_temp_bytes = 4096;
  measured[Pass::backward_total].peak_temp_bytes = 1; // no column of its own
  apply_arena_peaks(rows, measured);
  for (const CostRow &row : rows) {
    CHECK(row.fwd_peak_temp_bytes == 4096);
    CHECK(row.bwd_input_peak_temp_bytes == 9216);
    CHECK(row.recompute_peak_temp_bytes == 4096);
    CHECK(row.bwd_weight_peak_temp_bytes == 7);
  }
}

} // namespace ppsim::profiler
