// Re-timing speed of fixed orders (issue 20, part 4: >= 30 M ops/s on 1F1B p = 64, m = 4096,
// link contention exact, incremental after a local change). Figures and commands:
// docs/performance.md, "Re-timing fixed orders".
//
// The scenario, the schedule and the Retimer (dependency arrays and topological order) are
// built outside the timed region; `BM_engine_replay_*` times Engine::run on the same instance
// for comparison. `BM_retime_swap_*` swaps two adjacent ops in the middle of the middle device
// and swaps them back: two incremental re-times. `BM_synthesis_candidate` is one candidate of
// `ppsim synthesize`'s search (OrderSearch::step: a random move, its checks, one incremental
// re-time, and the move back when it is worse) on ZB-H1 with links and contention.
#include "run/synthesis.h"
#include "sim/engine.h"
#include "sim/retime.h"
#include "sim/scenario_builder.h"
#include "sim/schedules/registry.h"

#include <algorithm>
#include <benchmark/benchmark.h>
#include <vector>

namespace {

using namespace ppsim;

struct Instance {
  Scenario scenario;
  Schedule schedule;
};

// 1F1B with unit costs and no latency (the engine benchmark's instance), or ZB-H1 with
// per-stage costs, latency 0.1 plus 1 MB over 10 GB/s per boundary, and link contention.
Instance make_instance(const std::string &name, int devices, int microbatches) {
  ScenarioInput input;
  input.devices = devices;
  input.microbatches = microbatches;
  if (name != "1f1b") {
    input.costs_per_device = false;
    input.forward.clear();
    input.backward_input.clear();
    input.backward_weight.clear();
    for (int s = 0; s < devices; ++s) {
      input.forward.push_back({10 + s % 3, 10});
      input.backward_input.push_back({20 + s % 5, 10});
      input.backward_weight.push_back({8 + s % 2, 10});
      input.bytes.output.push_back(1e6);
    }
    input.latency = {1, 10};
    input.bandwidth_bytes_per_second = 1e10;
    input.contention = true;
  }
  const ScheduleInfo &info = find_schedule(name);
  Instance instance{build_scenario(input, info), {}};
  instance.schedule = generate_schedule(info, instance.scenario, GeneratorOptions{});
  return instance;
}

void count_ops(benchmark::State &state, const Instance &instance) {
  const auto ops = static_cast<std::int64_t>(instance.schedule.op_count());
  state.SetItemsProcessed(state.iterations() * ops);
  state.counters["ops"] = static_cast<double>(ops);
}

void retime(benchmark::State &state, const std::string &name) {
  const Instance instance =
      make_instance(name, static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  Retimer retimer(instance.scenario, instance.schedule);
  for (auto _ : state) {
    retimer.retime();
    benchmark::DoNotOptimize(retimer.makespan());
  }
  count_ops(state, instance);
}

void engine_replay(benchmark::State &state, const std::string &name) {
  const Instance instance =
      make_instance(name, static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  const Engine engine(instance.scenario, instance.schedule);
  for (auto _ : state) {
    Timing timing = engine.run();
    benchmark::DoNotOptimize(timing.end.data());
  }
  count_ops(state, instance);
}

void swap_and_back(benchmark::State &state, const std::string &name) {
  const Instance instance =
      make_instance(name, static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  Retimer retimer(instance.scenario, instance.schedule);
  const int device = instance.scenario.devices / 2;
  const int middle = static_cast<int>(instance.schedule.device_ops[at(device)].size()) / 2;
  // The first adjacent pair from the middle whose swap keeps the orders runnable.
  int position = middle;
  while (!retimer.swap_adjacent(device, position))
    ++position;
  retimer.swap_adjacent(device, position);
  for (auto _ : state) {
    retimer.swap_adjacent(device, position);
    retimer.swap_adjacent(device, position);
    benchmark::DoNotOptimize(retimer.makespan());
  }
}

void BM_synthesis_candidate(benchmark::State &state) {
  const Instance instance =
      make_instance("zb-h1", static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  OrderSearch search(instance.scenario, instance.schedule, 1);
  for (auto _ : state)
    search.step();
  state.SetItemsProcessed(search.evaluations());
  state.counters["ops"] = static_cast<double>(instance.schedule.op_count());
}

void BM_retime_1f1b(benchmark::State &state) { retime(state, "1f1b"); }
void BM_retime_zb_h1_links(benchmark::State &state) { retime(state, "zb-h1"); }
void BM_engine_replay_1f1b(benchmark::State &state) { engine_replay(state, "1f1b"); }
void BM_engine_replay_zb_h1_links(benchmark::State &state) { engine_replay(state, "zb-h1"); }
void BM_retime_swap_1f1b(benchmark::State &state) { swap_and_back(state, "1f1b"); }
void BM_retime_swap_zb_h1_links(benchmark::State &state) { swap_and_back(state, "zb-h1"); }

double minimum(const std::vector<double> &values) {
  return *std::min_element(values.begin(), values.end());
}

void large(benchmark::internal::Benchmark *benchmark) {
  benchmark->ArgNames({"p", "m"})
      ->Args({64, 4096})
      ->ComputeStatistics("min", minimum)
      ->Unit(benchmark::kMillisecond);
}

} // namespace

BENCHMARK(BM_retime_1f1b)->Apply(large);
BENCHMARK(BM_engine_replay_1f1b)->Apply(large);
BENCHMARK(BM_retime_zb_h1_links)->Apply(large);
BENCHMARK(BM_engine_replay_zb_h1_links)->Apply(large);
BENCHMARK(BM_retime_swap_1f1b)->Apply(large)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_retime_swap_zb_h1_links)->Apply(large)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_synthesis_candidate)
    ->ArgNames({"p", "m"})
    ->Args({8, 32})
    ->Args({16, 64})
    ->ComputeStatistics("min", minimum)
    ->Unit(benchmark::kMicrosecond);
