// Remat speed (issues 5, 13 and 17): the StageRemat ILP for ZB-H2, p = 4, m = 16, at a cap
// that forces remat, solved to optimality (target < 1 s); the greedy baseline from 64 to 4096
// microbatches (near-linear); the rotor DP for 64 layers and 500 memory slots (target < 1 s);
// the partition DP on 1000 to 100 000 layers (target: seconds). Figures and commands:
// docs/performance.md, section Rematerialization.
#include "base/index.h"
#include "remat/baselines.h"
#include "remat/partition.h"
#include "remat/rotor.h"
#include "remat/stage_remat_ilp.h"
#include "sim/scenario_builder.h"
#include "sim/schedules/registry.h"

#include <benchmark/benchmark.h>

#include <optional>
#include <random>

namespace {

using namespace ppsim;

// ZB-H2 with unit costs and the count-model cap K (its uncapped peak is 2p - 1 = 7).
void BM_stage_remat_ilp_zb_h2(benchmark::State &state) {
  ScenarioInput input;
  input.devices = 4;
  input.microbatches = 16;
  input.cap_activations = static_cast<double>(state.range(0));
  const ScheduleInfo &info = find_schedule("zb-h2");
  const Scenario scenario = build_scenario(input, info);
  const Schedule base = generate_schedule(info, scenario, {});
  RematSolution solution;
  for (auto _ : state) {
    solution = solve_stage_remat(scenario, base, IlpOptions{60, 0});
    benchmark::DoNotOptimize(solution.objective);
  }
  state.counters["optimal"] = solution.status == solver::Status::optimal ? 1 : 0;
  state.counters["max_span"] = static_cast<double>(solution.simulation.metrics.max_span.count());
  state.counters["recomputed_ops"] = solution.plan.recompute_count();
  state.counters["solver_s"] = solution.seconds;
}

// The greedy baseline (the ILP's start) on 1F1B, p = 8, m microbatches, profiled-looking costs
// and a cap that forces recomputation on every device: near-linear in the ops.
void BM_greedy_plan(benchmark::State &state) {
  ScenarioInput input;
  input.devices = 8;
  input.microbatches = static_cast<int>(state.range(0));
  input.forward = {Rational{13960596, 1000000}};
  input.backward_input = {Rational{1618318, 100000}};
  input.backward_weight = {Rational{11738016, 1000000}};
  input.cap_activations = 4.5;
  const ScheduleInfo &info = find_schedule("zb-h1");
  const Scenario scenario = build_scenario(input, info);
  const Schedule base = generate_schedule(info, scenario, {});
  std::size_t recomputed = 0;
  for (auto _ : state) {
    const std::optional<RematPlan> plan = greedy_plan(scenario, base);
    recomputed = plan ? ppsim::at(plan->recompute_count()) : 0;
    benchmark::DoNotOptimize(recomputed);
  }
  state.counters["recomputed_ops"] = static_cast<double>(recomputed);
  state.SetComplexityN(state.range(0));
}

// A heterogeneous chain of n layers (seeded), budget in slots: table + reconstruction.
void BM_rotor(benchmark::State &state) {
  const int n = static_cast<int>(state.range(0));
  const std::int64_t slots = state.range(1);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> time(1, 9), size(1, 8);
  rotor::ChainArrays a;
  for (int l = 0; l < n; ++l) {
    a.ftime.push_back(time(rng));
    a.ftmp.push_back(size(rng) / 4);
  }
  for (int l = 0; l <= n; ++l) {
    a.btime.push_back(l < n ? 2 * time(rng) : 0);
    a.x.push_back(size(rng));
    a.btmp.push_back(size(rng) / 4);
  }
  for (int l = 0; l <= n; ++l)
    a.xbar.push_back(a.x[ppsim::at(l)] + 2 * size(rng));
  const rotor::Chain chain = rotor::single_option_chain(a);
  for (auto _ : state) {
    const rotor::Table table(chain, slots);
    benchmark::DoNotOptimize(table.sequence(slots).size());
  }
}

// GPT-6.2B-like blocks (sizes of scenarios/models/gpt-6.2b.csv) whose times vary by +-20%
// (seeded), split into 8 stages for 1F1B under a limit that the even split needs about half of:
// state.range(0) layers, balanced (0) or remat-aware (1) with tensor parallelism 8.
void BM_partition(benchmark::State &state) {
  const int layers = static_cast<int>(state.range(0));
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> scale(800, 1200);
  CostFile costs;
  for (int l = 0; l < layers; ++l) {
    const int s = scale(rng);
    CostRow row;
    row.layer_id = l;
    row.fwd_ms = {3889520LL * s, 1000000000};
    row.bwd_input_ms = {4445165LL * s, 1000000000};
    row.bwd_weight_ms = {3333874LL * s, 1000000000};
    row.recompute_ms = row.fwd_ms;
    row.recompute_selective_ms = {555646LL * s, 1000000000};
    row.stored_input_bytes = row.output_bytes = 33554432;
    row.activation_bytes_full = 3254779904;
    row.activation_bytes_selective = 570425344;
    row.param_bytes = row.grad_bytes = 402759680;
    costs.rows.push_back(row);
  }
  PartitionOptions options;
  options.stages = 8;
  options.mode = state.range(1) ? PartitionMode::remat_aware : PartitionMode::balanced;
  options.windows.tp = state.range(1) ? 8 : 1;
  // Stage 0 of an even split holds layers / 8 layers for 8 microbatches.
  options.budget_bytes = layers * 1.7e9;
  Partition partition;
  for (auto _ : state) {
    partition = partition_costs(costs, options);
    benchmark::DoNotOptimize(partition.bottleneck_ms);
  }
  state.counters["bottleneck_ms"] = partition.bottleneck_ms;
}

} // namespace

BENCHMARK(BM_partition)
    ->Args({1000, 0})
    ->Args({10000, 0})
    ->Args({100000, 0})
    ->Args({100, 1})
    ->Args({200, 1})
    ->Args({400, 1})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(BM_stage_remat_ilp_zb_h2)
    ->Arg(4)
    ->Arg(5)
    ->Arg(6)
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK(BM_greedy_plan)
    ->RangeMultiplier(4)
    ->Range(64, 4096)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();
BENCHMARK(BM_rotor)->Args({64, 500})->Unit(benchmark::kMillisecond);
