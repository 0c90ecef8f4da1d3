// compute_bounds at production scale (issue 4: p = 1024, m = 65536 in under 10 ms): single
// wave with a cap (integer scan), split backward (LB3), and a multi-chunk placement (LP).
#include "bounds/analyzer.h"
#include "sim/scenario_builder.h"
#include "sim/schedules/registry.h"

#include <benchmark/benchmark.h>

namespace {

ppsim::Scenario large_scenario(const char *schedule, int chunks) {
  ppsim::ScenarioInput input;
  input.devices = 1024;
  input.microbatches = 65536;
  input.chunks = chunks;
  input.forward = {{1, 1}};
  input.backward_input = {{2, 1}};
  input.backward_weight = {{1, 1}};
  input.cap_activations = 4.0;
  return ppsim::build_scenario(input, ppsim::find_schedule(schedule), ppsim::RunSize::scenario);
}

void run(benchmark::State &state, const char *schedule, int chunks) {
  const ppsim::Scenario scenario = large_scenario(schedule, chunks);
  const ppsim::BoundsOptions options = ppsim::bounds_options_for(ppsim::find_schedule(schedule));
  for (auto _ : state)
    benchmark::DoNotOptimize(ppsim::compute_bounds(scenario, options));
}

void BM_bounds_1f1b_p1024_m65536(benchmark::State &state) { run(state, "1f1b", 0); }
void BM_bounds_zb_h1_p1024_m65536(benchmark::State &state) { run(state, "zb-h1", 0); }
void BM_bounds_interleaved_v2_p1024_m65536(benchmark::State &state) {
  run(state, "interleaved-1f1b", 2);
}

} // namespace

BENCHMARK(BM_bounds_1f1b_p1024_m65536)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_bounds_zb_h1_p1024_m65536)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_bounds_interleaved_v2_p1024_m65536)->Unit(benchmark::kMicrosecond);
