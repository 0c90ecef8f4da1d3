// Greedy and search schedule generators (issue 3: zb-auto for p = 32, m = 256 in under 20 ms;
// v-auto for p = 16, m = 64 in under 1 s; the Python references take about 0.7 s and 99 s;
// issue 33: v-half's device peak in O(log slots) a tried slot, against zb-v at p = 128,
// m = 1024).
// Figures and commands: docs/performance.md, "Schedule generators".
//
// The scenario is built outside the timed region; each iteration runs the generator alone.
// BM_v_auto's second argument is the thread count (0 = all cores).
#include "base/error.h"
#include "base/index.h"
#include "sim/scenario_builder.h"
#include "sim/schedules/greedy.h"
#include "sim/schedules/registry.h"
#include "sim/schedules/v_auto.h"

#include <benchmark/benchmark.h>

namespace {

using namespace ppsim;

Scenario uniform(const char *schedule, int p, int m) {
  ScenarioInput input;
  input.devices = p;
  input.microbatches = m;
  input.forward = {{1, 1}};
  input.backward_input = {{1, 1}};
  input.backward_weight = {{1, 1}};
  return build_scenario(input, find_schedule(schedule));
}

void BM_zb_auto(benchmark::State &state) {
  const Scenario scenario =
      uniform("zb-auto", static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state)
    benchmark::DoNotOptimize(schedules::zb_auto_timed(scenario, scenario.devices));
}
BENCHMARK(BM_zb_auto)->Args({8, 64})->Args({32, 256})->Unit(benchmark::kMillisecond);

void BM_zb_v_greedy(benchmark::State &state) {
  const Scenario scenario =
      uniform("zb-v-greedy", static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state)
    benchmark::DoNotOptimize(schedules::zb_v_greedy_timed(scenario, scenario.devices));
}
BENCHMARK(BM_zb_v_greedy)->Args({8, 64})->Args({32, 256})->Unit(benchmark::kMillisecond);

void BM_v_half(benchmark::State &state) {
  const Scenario scenario =
      uniform("v-half", static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state)
    benchmark::DoNotOptimize(schedules::v_family_timed(scenario, schedules::VPattern::half));
}
BENCHMARK(BM_v_half)
    ->Args({8, 64})
    ->Args({16, 64})
    ->Args({128, 1024})
    ->Unit(benchmark::kMillisecond);

// zb-v's hand-made pattern, the reference for v-half's cost at the same op count (issue 33).
void BM_zb_v(benchmark::State &state) {
  const Scenario scenario =
      uniform("zb-v", static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  const ScheduleInfo &info = find_schedule("zb-v");
  for (auto _ : state)
    benchmark::DoNotOptimize(generate_schedule(info, scenario, {}).device_ops.size());
}
BENCHMARK(BM_zb_v)->Args({128, 1024})->Unit(benchmark::kMillisecond);

// Every registered generator at p = 4, m = 16 under a cap of one activation, which most
// schedules cannot meet: each must refuse (or generate) in time about linear in its op count
// (issue 16; zb-v-greedy once spun for 25 s here).
void BM_impossible_cap(benchmark::State &state) {
  const ScheduleInfo &info = schedule_registry()[ppsim::at(state.range(0))];
  ScenarioInput input;
  input.devices = 4;
  input.microbatches = 16;
  input.forward = {{1, 1}};
  input.backward_input = {{1, 1}};
  input.backward_weight = {{1, 1}};
  input.cap_activations = 1;
  state.SetLabel(info.name);
  for (auto _ : state) {
    try {
      const Scenario scenario = build_scenario(input, info);
      benchmark::DoNotOptimize(generate_schedule(info, scenario, {}).device_ops.size());
    } catch (const Error &) {
      // refused, as it should be
    }
  }
}
BENCHMARK(BM_impossible_cap)
    ->DenseRange(0, static_cast<int>(ppsim::schedule_registry().size()) - 1)
    ->Unit(benchmark::kMillisecond);

void BM_v_auto(benchmark::State &state) {
  const int p = static_cast<int>(state.range(0));
  const Scenario scenario = uniform("v-auto", p, static_cast<int>(state.range(1)));
  const auto threads = static_cast<unsigned>(state.range(2));
  for (auto _ : state)
    benchmark::DoNotOptimize(schedules::v_auto_search(scenario, 2 * p, threads));
}
BENCHMARK(BM_v_auto)
    ->Args({4, 8, 1})
    ->Args({16, 64, 1})
    ->Args({16, 64, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

} // namespace
