// Remat speed (issues 5 and 13): the StageRemat ILP for ZB-H2, p = 4, m = 16, at a budget that
// forces remat, solved to optimality (target < 1 s); the greedy baseline from 64 to 4096
// microbatches (near-linear); the rotor DP for 64 layers and 500 memory slots (target < 1 s). Figures and commands: docs/performance.md, section Rematerialization.
#include "remat/baselines.h"
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
    recomputed = plan ? static_cast<std::size_t>(plan->recompute_count()) : 0;
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
    a.xbar.push_back(a.x[static_cast<std::size_t>(l)] + 2 * size(rng));
  const rotor::Chain chain = rotor::single_option_chain(a);
  for (auto _ : state) {
    const rotor::Table table(chain, slots);
    benchmark::DoNotOptimize(table.sequence(slots).size());
  }
}

} // namespace

BENCHMARK(BM_stage_remat_ilp_zb_h2)
    ->Arg(4)
    ->Arg(5)
    ->Arg(6)
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK(BM_greedy_plan)->RangeMultiplier(4)->Range(64, 4096)->Unit(benchmark::kMillisecond)->Complexity();
BENCHMARK(BM_rotor)->Args({64, 500})->Unit(benchmark::kMillisecond);
