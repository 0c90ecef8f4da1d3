// Engine replay speed and memory (issue 2: 1F1B with p = 64, m = 4096, about 524k ops, in under
// 100 ms on one core, i.e. >= 5 M ops/s). Figures and commands: docs/performance.md.
//
// Each case builds the scenario and schedule outside the timed region. `BM_engine_construct`
// times Engine construction (op index and dependency graph), `BM_engine_replay` times
// `Engine::run` alone, `BM_simulate` the whole pipeline a sweep runs (validation, engine,
// memory tracking, metrics); `BM_first_touch` the kernel's cost of fresh memory, which bounds a
// command's end-to-end speed. The `peak_rss_MiB` counter is the process's peak resident set: run
// one case per process (bench/peak_rss.sh) to read it per (p, m).
#include "sim/engine.h"
#include "sim/metrics.h"
#include "sim/scenario_builder.h"
#include "sim/schedules/registry.h"

#include <algorithm>
#include <benchmark/benchmark.h>
#include <memory>
#include <sys/resource.h>
#include <vector>

namespace {

using namespace ppsim;

struct Instance {
  Scenario scenario;
  Schedule schedule;
};

// 1F1B with unit costs F = B = W = 1 and no latency.
Instance one_f_one_b(const benchmark::State &state) {
  ScenarioInput input;
  input.devices = static_cast<int>(state.range(0));
  input.microbatches = static_cast<int>(state.range(1));
  const ScheduleInfo &info = find_schedule("1f1b");
  Instance instance{build_scenario(input, info), {}};
  instance.schedule = generate_schedule(info, instance.scenario, GeneratorOptions{});
  return instance;
}

void report(benchmark::State &state, const Instance &instance) {
  const auto ops = static_cast<std::int64_t>(instance.schedule.op_count());
  state.SetItemsProcessed(state.iterations() * ops);
  state.counters["ops"] = static_cast<double>(ops);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  state.counters["peak_rss_MiB"] = static_cast<double>(usage.ru_maxrss) / 1024.0; // KiB on Linux
}

void BM_engine_construct(benchmark::State &state) {
  const Instance instance = one_f_one_b(state);
  for (auto _ : state) {
    const Engine engine(instance.scenario, instance.schedule);
    benchmark::DoNotOptimize(&engine);
  }
  report(state, instance);
}

void BM_engine_replay(benchmark::State &state) {
  const Instance instance = one_f_one_b(state);
  const Engine engine(instance.scenario, instance.schedule);
  for (auto _ : state) {
    Timing result = engine.run();
    benchmark::DoNotOptimize(result.end.data());
  }
  report(state, instance);
}

void BM_simulate(benchmark::State &state) {
  const Instance instance = one_f_one_b(state);
  for (auto _ : state) {
    Simulation simulation = simulate(instance.scenario, instance.schedule);
    benchmark::DoNotOptimize(simulation.metrics.makespan);
  }
  report(state, instance);
}

// The floor under any end-to-end figure: the kernel maps and clears each fresh 4 KiB page on its
// first touch. A 64 MiB block is beyond glibc's largest mmap threshold (32 MiB), so every
// iteration gets fresh pages, as a command does; bytes_per_second gives the cost per MiB.
void BM_first_touch(benchmark::State &state) {
  const auto bytes = static_cast<std::size_t>(state.range(0)) << 20;
  constexpr std::size_t kPage = 4096;
  for (auto _ : state) {
    const auto block = std::make_unique_for_overwrite<char[]>(bytes);
    for (std::size_t offset = 0; offset < bytes; offset += kPage)
      block[offset] = 1;
    benchmark::DoNotOptimize(block.get());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
}

// With --benchmark_repetitions, the "min" aggregate is the least disturbed run: on a shared
// machine other processes only ever add time.
double minimum(const std::vector<double> &values) {
  return *std::min_element(values.begin(), values.end());
}

void grid(benchmark::internal::Benchmark *benchmark) {
  benchmark->ArgNames({"p", "m"})
      ->ArgsProduct({{8, 64, 256}, {64, 1024, 4096}})
      ->ComputeStatistics("min", minimum)
      ->Unit(benchmark::kMillisecond);
}

} // namespace

BENCHMARK(BM_engine_construct)->Apply(grid);
BENCHMARK(BM_engine_replay)->Apply(grid);
BENCHMARK(BM_simulate)->Apply(grid);
BENCHMARK(BM_first_touch)
    ->Arg(64)
    ->ComputeStatistics("min", minimum)
    ->Unit(benchmark::kMillisecond);
