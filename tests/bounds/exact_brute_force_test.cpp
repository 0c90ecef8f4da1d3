// The exact optimum's certificate against an independent brute force (tests/bounds/brute_force.h,
// docs/bounds.md, "How the exact optimum is tested"): on tiny instances, single wave and V, fused
// and split, with latency, R != F and cheap backward recomputation, a proven optimum equals the
// brute force's, and no bound (LB0-LB4, the exact search's) is above it.
#include "bounds/analyzer.h"
#include "bounds/exact.h"
#include "bounds/incumbent.h"
#include "tests/bounds/brute_force.h"
#include "tests/sim/test_support.h"

#include <doctest/doctest.h>

#include <fmt/format.h>
#include <random>
#include <string>

using ppsim::BackwardForm;
using ppsim::Ticks;
using ppsim::testing::uniform_input;

namespace {

constexpr std::int64_t kMaxNodes = 20'000'000;

/// The brute-force optimum of `scenario`, below the makespan of a known feasible schedule; its
/// orders, when it found better, replay in the engine within the cap at the same makespan.
Ticks brute_force_optimum(const ppsim::Scenario &scenario, BackwardForm form, Ticks known) {
  ppsim::testing::BruteForce search(scenario, form);
  const std::optional<ppsim::testing::BruteForceResult> result =
      search.solve(known + Ticks{1}, kMaxNodes);
  REQUIRE(result.has_value());
  REQUIRE_FALSE(result->schedule.device_ops.empty());
  const ppsim::Simulation replay = ppsim::simulate(scenario, result->schedule);
  CHECK(replay.metrics.feasible);
  CHECK(replay.metrics.makespan == result->makespan);
  return result->makespan;
}

ppsim::ExactOptions always_solve() {
  ppsim::ExactOptions options;
  options.stop_when_bound_met = false;
  options.time_limit_seconds = 120;
  return options;
}

/// Solves `scenario` both ways: a proven optimum equals the brute force's; every bound is at
/// most it. Returns the optimum.
Ticks check_against_brute_force(const ppsim::Scenario &scenario, BackwardForm form) {
  const ppsim::ExactResult exact = ppsim::exact_optimum(scenario, form, always_solve());
  REQUIRE(exact.proven_optimal);
  const Ticks optimum = brute_force_optimum(scenario, form, exact.makespan);
  CHECK(exact.makespan == optimum);
  CHECK(exact.lower_bound <= optimum);
  const ppsim::BoundsReport report = ppsim::compute_bounds(scenario, {form, "", 0});
  for (const ppsim::NamedBound &bound : report.lower_bounds) {
    CAPTURE(bound.name);
    if (bound.bounds_makespan)
      CHECK(bound.value <= optimum);
  }
  return optimum;
}

ppsim::ScenarioInput grid_input(int p, int m, int f, int b, int w, int k, int c) {
  ppsim::ScenarioInput input = uniform_input(p, m, {f, 1}, {b, 1}, {w, 1}, {c, 1});
  input.cap_activations = static_cast<double>(k);
  return input;
}

} // namespace

TEST_CASE("the false proofs of the empty recomputation window: the optimum, not the incumbent") {
  // R of the last (s, j) cannot end before B when F is long against B: that horizon only rules
  // out that recomputation, it does not rule out the horizon (bounds/exact.cpp, add_op).
  const ppsim::Scenario fused =
      ppsim::testing::scenario_for("1f1b", grid_input(2, 2, 4, 1, 0, 1, 0));
  CHECK(check_against_brute_force(fused, BackwardForm::full) == Ticks{15});
  const ppsim::Scenario split =
      ppsim::testing::scenario_for("zb-h1", grid_input(3, 3, 4, 1, 1, 2, 0));
  CHECK(check_against_brute_force(split, BackwardForm::split) == Ticks{27});
}

TEST_CASE("where only RW or RBW reaches the optimum, the exact optimum has them") {
  // Found by the brute force with and without RW/RBW (RW = 1 rebuilding all of W's share, RBW = 3):
  // they save a tick; the exact optimum's model once had no RW/RBW and would prove 22.
  ppsim::ScenarioInput input = grid_input(2, 3, 2, 3, 1, 2, 0);
  input.recompute_weight_inputs = {{1, 1}};
  input.recompute_full_backward = {{3, 1}};
  input.m_ba_fraction = 1.0;
  const ppsim::Scenario scenario = ppsim::testing::scenario_for("zb-h1", input);
  CHECK(check_against_brute_force(scenario, BackwardForm::split) == Ticks{21});
  ppsim::testing::BruteForce without(scenario, BackwardForm::split, false);
  const auto r_only = without.solve(Ticks{30}, kMaxNodes);
  REQUIRE(r_only.has_value());
  CHECK(r_only->makespan == Ticks{22});
}

TEST_CASE("exact optimum = brute force on a sample of the grid p, m in {2, 3}") {
  // Seeded sample of F in {2, 3, 4}, B in {1, 2}, W in {0, 1}, K in {1, 2}, c in {0, 1}; the
  // fused backward where W = 0, both forms where W = 1.
  std::mt19937 random(35);
  const auto pick = [&](int low, int high) {
    return std::uniform_int_distribution<int>(low, high)(random);
  };
  for (int trial = 0; trial < 14; ++trial) {
    const int p = pick(2, 3), m = pick(2, 3), f = pick(2, 4), b = pick(1, 2), w = pick(0, 1);
    const int k = pick(1, 2), c = pick(0, 1);
    const bool split = w == 1 && trial % 2 == 0;
    CAPTURE(fmt::format("p={} m={} F={} B={} W={} K={} c={} split={}", p, m, f, b, w, k, c, split));
    const ppsim::Scenario scenario =
        ppsim::testing::scenario_for(split ? "zb-h1" : "1f1b", grid_input(p, m, f, b, w, k, c));
    check_against_brute_force(scenario, split ? BackwardForm::split : BackwardForm::full);
  }
}

TEST_CASE("exact optimum = brute force: V placement, R != F, lumped recomputation") {
  // p = 2, v = 2, m = 2, K = 1 (half a device's activations per chunk); chosen among cases the
  // ILP proves within a second, so the check stays fast.
  struct Case {
    bool split;
    int forward, backward, recompute, latency;
    ppsim::RematTiming timing;
    double cap;
  };
  const ppsim::RematTiming early = ppsim::RematTiming::early, lumped = ppsim::RematTiming::lumped;
  for (const Case &v : {Case{true, 1, 1, 1, 0, early, 1}, Case{true, 2, 1, 1, 0, lumped, 1},
                        Case{true, 2, 2, 1, 0, early, 1}, Case{true, 1, 1, 1, 0, early, 1.5},
                        Case{false, 2, 1, 1, 1, early, 1}, Case{false, 3, 2, 2, 1, lumped, 1},
                        Case{false, 2, 2, 1, 0, early, 1}, Case{false, 1, 1, 1, 1, lumped, 1}}) {
    ppsim::ScenarioInput input = uniform_input(2, 2, {v.forward, 1}, {v.backward, 1},
                                               {v.split ? 1 : 0, 1}, {v.latency, 1}, 2);
    input.recompute_forward = {{v.recompute, 1}};
    input.cap_activations = v.cap;
    input.remat_timing = v.timing;
    CAPTURE(fmt::format("split={} F={} B={} r={} c={} lumped={} K={}", v.split, v.forward,
                        v.backward, v.recompute, v.latency, v.timing == lumped, v.cap));
    const ppsim::Scenario scenario =
        ppsim::testing::scenario_for(v.split ? "zb-v" : "hanayo", input);
    check_against_brute_force(scenario, v.split ? BackwardForm::split : BackwardForm::full);
  }
}
