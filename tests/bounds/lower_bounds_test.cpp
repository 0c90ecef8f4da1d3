// Lower bounds of docs/bounds.md, "The bounds" against the exact oracles of docs/oracles.md, "Split
// backward" and "Bounds at small caps", and the memory-time minimizers against brute force.
#include "bounds/analyzer.h"
#include "bounds/lower_bounds.h"
#include "tests/sim/test_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <random>

using ppsim::BackwardForm;
using ppsim::Ticks;
using ppsim::testing::uniform_input;

namespace {

ppsim::Scenario scenario_for(const std::string &schedule, ppsim::ScenarioInput input,
                             std::optional<double> cap = std::nullopt) {
  input.cap_activations = cap;
  return ppsim::build_scenario(input, ppsim::find_schedule(schedule));
}

// Unsplit single-wave scenario with full backward B (W = 0), as in docs/oracles.md, "Bounds at
// small caps".
ppsim::Scenario single_wave(int p, int m, int f, int b, std::optional<double> cap) {
  return scenario_for("1f1b", uniform_input(p, m, {f, 1}, {b, 1}, {0, 1}), cap);
}

} // namespace

TEST_CASE("LB2 oracle table (docs/oracles.md, 'Bounds at small caps')") {
  // docs/bounds.md, "LB2 in detail": T_LB2(K) = max((m+p-1)(F+Bf), max_i i(F+Bf) + min_x
  // max(m(F+Bf) + (m-x)r, [x(p-i)(F+Bf) + (m-x)(r+Bf)]/K)), r = F, c = 0, single wave.
  struct Row {
    int p, m, f, b;
    int by_cap[5]; // K = 1, 2, 3, 4, K >= p (no cap)
  };
  const Row rows[] = {
      {2, 2, 1, 1, {6, 6, 6, 6, 6}},       {2, 4, 1, 1, {11, 10, 10, 10, 10}},
      {2, 6, 1, 1, {16, 14, 14, 14, 14}},  {2, 8, 1, 1, {22, 18, 18, 18, 18}},
      {2, 16, 1, 1, {43, 34, 34, 34, 34}}, {2, 2, 1, 2, {9, 9, 9, 9, 9}},
      {2, 4, 1, 2, {15, 15, 15, 15, 15}},  {2, 6, 1, 2, {23, 21, 21, 21, 21}},
      {2, 8, 1, 2, {30, 27, 27, 27, 27}},  {2, 16, 1, 2, {60, 51, 51, 51, 51}},
  };
  for (const Row &row : rows) {
    for (int k = 0; k < 5; ++k) {
      const std::optional<double> cap = k < 4 ? std::optional<double>(k + 1) : std::nullopt;
      CAPTURE(row.m);
      CAPTURE(row.b);
      CAPTURE(k);
      const ppsim::Scenario scenario = single_wave(row.p, row.m, row.f, row.b, cap);
      CHECK(ppsim::lb2_memory_time(scenario, BackwardForm::full) == Ticks{row.by_cap[k]});
    }
  }
}

TEST_CASE("LB2 worked example of docs/bounds.md and the all-remat comparison rows") {
  // p = 2, m = 4, F = Bf = 1, K = 1: LB1 = 10, device 0 gives 11 at x = 1, LB2 = 11; all-remat
  // 1F1B runs in m(2F+B) + (p-1)(F+B) - 2F = 12 (docs/oracles.md, "Bounds at small caps").
  const ppsim::Scenario scenario = single_wave(2, 4, 1, 1, 1.0);
  CHECK(ppsim::lb1_device_path(scenario, BackwardForm::full) == Ticks{10});
  CHECK(ppsim::lb2_memory_time(scenario, BackwardForm::full) == Ticks{11});
  const ppsim::BoundsReport report =
      ppsim::compute_bounds(scenario, {BackwardForm::full, "allremat-1f1b", 0});
  CHECK(report.best_lower_bound == Ticks{11});
  CHECK(report.closed_form == Ticks{12});
  CHECK(ppsim::makespan_gap(Ticks{12}, report) == doctest::Approx(1.0 / 11));
  const ppsim::Scenario heavier = single_wave(2, 4, 1, 2, 1.0);
  CHECK(ppsim::lb2_memory_time(heavier, BackwardForm::full) == Ticks{15});
}

TEST_CASE("LB0 and LB1 on the 1F1B oracles (docs/oracles.md, 'Single wave, full backward')") {
  // LB1 = (m+p-1)(F+Bf) with c = 0 is attained by 1F1B: p = 4, m = 8, F = B = W = 1 -> 33.
  const ppsim::Scenario unit = scenario_for("1f1b", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  CHECK(ppsim::lb0_chain(unit, BackwardForm::full) == Ticks{12});
  CHECK(ppsim::lb1_device_path(unit, BackwardForm::full) == Ticks{33});
  // With c = 1/2 the chain pays 2(p-1)c = 3 more; GPipe reaches LB1 + 2(p-1)c = 36 (O-2).
  const ppsim::Scenario latency =
      scenario_for("gpipe", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}, {1, 2}));
  CHECK(latency.time_scale.to_units(ppsim::lb0_chain(latency, BackwardForm::full)) == 15);
  CHECK(latency.time_scale.to_units(ppsim::lb1_device_path(latency, BackwardForm::full)) == 36);
}

TEST_CASE("LB3 check: ZB-H2 attains (p-1)F + m(F+B+W) (docs/oracles.md, 'Split backward')") {
  const ppsim::Scenario scenario =
      scenario_for("zb-h2", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  CHECK(ppsim::lb3_split_backward(scenario) == Ticks{27});
  const ppsim::BoundsReport report =
      ppsim::compute_bounds(scenario, ppsim::bounds_options_for(ppsim::find_schedule("zb-h2")));
  CHECK(report.best_lower_bound == Ticks{27});
  CHECK(report.find("LB3") == Ticks{27});
  // Split form: LB1 uses Bf = B, so (m+p-1)(F+B) = 22; the span bound is m(F+B+W) = 24.
  CHECK(report.find("LB1") == Ticks{22});
  CHECK(report.find("span_LB") == Ticks{24});
  CHECK(report.closed_form == Ticks{27});
  const ppsim::Simulation simulation = ppsim::simulate(
      scenario, ppsim::generate_schedule(ppsim::find_schedule("zb-h2"), scenario, {}));
  CHECK(simulation.metrics.makespan == report.best_lower_bound);
  CHECK(simulation.metrics.max_span == *report.find("span_LB"));
}

TEST_CASE("memory_time_integer equals a brute-force scan over x") {
  std::mt19937 random(4);
  std::uniform_int_distribution<int> small(0, 6);
  for (int trial = 0; trial < 500; ++trial) {
    ppsim::MemoryTimeStage stage;
    stage.busy = 1 + small(random);
    stage.recompute = small(random);
    stage.unit = 1;
    stage.recomputed_lifespan = stage.recompute + small(random);
    stage.kept_lifespan = small(random) + 1 + (trial % 2 == 0 ? stage.recomputed_lifespan : 0);
    const int m = 1 + small(random) * 3;
    const double cap = 0.5 + small(random);
    double best = 1e300;
    for (int x = 0; x <= m; ++x) {
      const double busy = m * stage.busy + (m - x) * stage.recompute;
      const double memory = x * stage.kept_lifespan + (m - x) * stage.recomputed_lifespan;
      best = std::min(best, std::max(busy, memory / cap));
    }
    CHECK(ppsim::memory_time_integer(m, stage, cap) == doctest::Approx(best));
  }
}

TEST_CASE("memory_time_relaxed is at most the integer minimum and matches the LP on a grid") {
  // Two stages: the LP value is the minimum over the real box, so it is <= the best integer
  // point and >= the best point of a fine grid minus the grid's resolution effect.
  std::mt19937 random(7);
  std::uniform_int_distribution<int> small(1, 6);
  for (int trial = 0; trial < 200; ++trial) {
    ppsim::MemoryTimeStage stages[2];
    for (ppsim::MemoryTimeStage &stage : stages) {
      stage.busy = small(random);
      stage.recompute = small(random);
      stage.unit = 0.5;
      stage.recomputed_lifespan = stage.recompute + small(random);
      stage.kept_lifespan = stage.recomputed_lifespan + small(random) * 2 - 4;
    }
    const int m = small(random);
    const double cap = small(random) * 0.5;
    const auto value = [&](double x0, double x1) {
      double busy = 0, memory = 0;
      const double xs[2] = {x0, x1};
      for (int s = 0; s < 2; ++s) {
        busy += m * stages[s].busy + (m - xs[s]) * stages[s].recompute;
        memory += stages[s].unit *
                  (xs[s] * stages[s].kept_lifespan + (m - xs[s]) * stages[s].recomputed_lifespan);
      }
      return std::max(busy, memory / cap);
    };
    double best_integer = 1e300, best_grid = 1e300;
    for (int a = 0; a <= 100 * m; ++a) {
      for (int b = 0; b <= 100 * m; b += 1) {
        const double v = value(a / 100.0, b / 100.0);
        best_grid = std::min(best_grid, v);
        if (a % 100 == 0 && b % 100 == 0)
          best_integer = std::min(best_integer, v);
      }
    }
    const double relaxed = ppsim::memory_time_relaxed(m, stages, cap);
    CHECK(relaxed <= best_integer + 1e-9);
    CHECK(relaxed <= best_grid + 1e-9);
    CHECK(relaxed >= best_grid - 0.05 * 12);
  }
}

TEST_CASE("without a cap LB2 equals LB1; a cap below one activation leaves LB2 out") {
  const ppsim::Scenario free = single_wave(3, 5, 1, 2, std::nullopt);
  CHECK(ppsim::lb2_memory_time(free, BackwardForm::full) ==
        ppsim::lb1_device_path(free, BackwardForm::full));
  const ppsim::Scenario tiny = single_wave(3, 5, 1, 2, 0.5);
  CHECK_FALSE(ppsim::lb2_memory_time(tiny, BackwardForm::full).has_value());
  const ppsim::BoundsReport report = ppsim::compute_bounds(tiny, {});
  CHECK_FALSE(report.cap_fits_one_activation);
  CHECK_FALSE(report.find("LB2").has_value());
}

TEST_CASE("issue_28 checkpoint levels are options of the memory-time bounds (docs/bounds.md, "
          "'LB2 in detail')") {
  // p = 2, m = 4, F = Bf = r = 1, K = 1/2: below one activation, so nothing fits without the
  // level of every stage, R of 1 tick keeping a quarter and walking at a half.
  const auto with_level = [](ppsim::Scenario scenario, double kept, double walk) {
    for (int s = 0; s < scenario.stage_count(); ++s) {
      scenario.stage_costs[ppsim::at(s)].checkpoint_level_recompute.push_back(Ticks{1});
      scenario.activations.stages[ppsim::at(s)].checkpoint_levels.push_back({kept, walk, false});
    }
    return scenario;
  };
  const ppsim::Scenario bare = single_wave(2, 4, 1, 1, 0.5);
  REQUIRE_FALSE(ppsim::lb2_memory_time(bare, BackwardForm::full).has_value());
  const ppsim::Scenario levelled = with_level(bare, 0.25, 0.5);
  CHECK_FALSE(ppsim::lb2_is_integer_scan(levelled));
  // Device 0 (L = 4): options keep (0, 4), R (1, 2), level (1, 1); the hull runs from the level
  // to keep at 3 of memory-time per tick saved: busy 12, memory 4 / K = 8 cross at x = 4/7 kept,
  // 12 - 4/7 -> 12. Device 1 (L = 2, PF = PB = 1): level (1, 1/2), keep (0, 2), x = 2 kept,
  // 1 + 10 + 1 = 12.
  CHECK(ppsim::lb2_memory_time(levelled, BackwardForm::full) == Ticks{12});
  // LB4: the knapsack of K = 1/2 holds the level's F at 1/4 twice (value 2). Device 0: T1 = 3,
  // 3 + 8 - 2 = 9; device 1: T1 = 2, its window of 1 holds one F, tail 1: 2 + 1 + 8 - 1 = 10.
  CHECK(ppsim::lb4_warmup(levelled, BackwardForm::full) == Ticks{10});
  const ppsim::BoundsReport report = ppsim::compute_bounds(levelled, {});
  CHECK(report.cap_fits_one_activation);
  CHECK(report.best_lower_bound == Ticks{12});
  // Below the level's walk nothing fits again.
  const ppsim::Scenario walk_over = with_level(bare, 0.25, 0.75);
  CHECK_FALSE(ppsim::lb2_memory_time(walk_over, BackwardForm::full).has_value());
  CHECK_FALSE(ppsim::lb4_warmup(walk_over, BackwardForm::full).has_value());
  CHECK_FALSE(ppsim::compute_bounds(walk_over, {}).cap_fits_one_activation);
  // Without a cap the levels change nothing: LB2 is LB1.
  const ppsim::Scenario free = with_level(single_wave(3, 5, 1, 2, std::nullopt), 0.25, 0.5);
  CHECK(ppsim::lb2_memory_time(free, BackwardForm::full) ==
        ppsim::lb1_device_path(free, BackwardForm::full));
}

TEST_CASE("issue_28 memory_time_relaxed with levels is the LP over every option, by brute force") {
  // One stage, m microbatches split among keep, R and two levels in steps of 1/8: the relaxation
  // is at most every mix and within the grid's step of the best one.
  std::mt19937 random(2812);
  std::uniform_real_distribution<double> real(0.0, 4.0);
  for (int trial = 0; trial < 200; ++trial) {
    ppsim::MemoryTimeStage stage;
    stage.busy = 1 + real(random);
    stage.recompute = real(random);
    stage.unit = 0.2 + real(random) / 4;
    stage.kept_lifespan = 2 + real(random);
    stage.recomputed_lifespan = stage.recompute + real(random);
    stage.levels = {{real(random), real(random)}, {real(random), real(random)}};
    const int m = 3;
    const double cap = 0.3 + real(random) / 2;
    const double relaxed = ppsim::memory_time_relaxed(m, {&stage, 1}, cap);
    const double options[4][2] = {{0, stage.unit * stage.kept_lifespan},
                                  {stage.recompute, stage.unit * stage.recomputed_lifespan},
                                  {stage.levels[0].recompute, stage.levels[0].memory_time},
                                  {stage.levels[1].recompute, stage.levels[1].memory_time}};
    double best = std::numeric_limits<double>::max();
    const int steps = 8 * m;
    for (int a = 0; a <= steps; ++a)
      for (int b = 0; a + b <= steps; ++b)
        for (int c = 0; a + b + c <= steps; ++c) {
          const double share[4] = {a / 8.0, b / 8.0, c / 8.0, (steps - a - b - c) / 8.0};
          double busy = m * stage.busy, memory = 0;
          for (int o = 0; o < 4; ++o) {
            busy += share[o] * options[o][0];
            memory += share[o] * options[o][1];
          }
          best = std::min(best, std::max(busy, memory / cap));
        }
    CAPTURE(trial);
    CHECK(relaxed <= best + 1e-9);
    // Rounding the LP's shares to the grid moves at most 6/8 of a microbatch between options.
    double slack = 0;
    for (const auto &option : options)
      slack = std::max({slack, option[0], option[1] / cap});
    CHECK(relaxed >= best - slack * 6 / 8 - 1e-9);
  }
}

TEST_CASE("multi-chunk placements use the LP relaxation (docs/bounds.md, 'LB2 in detail')") {
  // Interleaved p = 4, v = 2, m = 8, per-chunk F = B = W = 1 (Bf = 2), a_s = 1/2: LB1 = 57,
  // the makespan of O-8. At K = 1 device 3 (stages 3 and 7, PF = 3, PB = 6) decides:
  // A = m sum(F + Bf + r) = 64, C = m sum a (r + Bf) = 24; d_7 = a(L_7 - r - Bf) = 0, so x_7 = m
  // for free (busy 56); d_3 = (15 - 3)/2 = 6, crossing t = (56 - 24)/(1 + 6) = 32/7,
  // value 56 - 32/7 = 51.43 -> 52, bound 3 + 6 + 52 = 61. At K = 2 memory no longer binds.
  ppsim::ScenarioInput input = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}, {0, 1}, 2);
  const ppsim::Scenario tight = scenario_for("interleaved-1f1b", input, 1.0);
  const ppsim::Scenario loose = scenario_for("interleaved-1f1b", input, 2.0);
  CHECK_FALSE(ppsim::lb2_is_integer_scan(tight));
  CHECK(ppsim::lb1_device_path(tight, BackwardForm::full) == Ticks{57});
  CHECK(ppsim::lb2_memory_time(tight, BackwardForm::full) == Ticks{61});
  CHECK(ppsim::lb2_memory_time(loose, BackwardForm::full) == Ticks{57});
}

TEST_CASE("LB4 oracle: at K = p device 0 idles (p-1)B before its first B (docs/bounds.md, 'LB4 in "
          "detail')") {
  // Uniform single wave, c = 0, split, K = p <= m: T1 = pF + (p-1)B, the window holds K forwards,
  // so LB4 = T1 + m(F+B+W) - pF = m(F+B+W) + (p-1)B.
  const ppsim::ScenarioInput unequal = uniform_input(4, 8, {2, 1}, {3, 1}, {1, 1});
  CHECK(ppsim::lb4_warmup(scenario_for("zb-h1", unequal, 4.0), BackwardForm::split) == Ticks{57});
  // ZB-H1 is m(F+B+W) + (p-1)(F+B-W): with F = W it meets LB4, so it is optimal at K = p.
  const ppsim::ScenarioInput equal = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  const ppsim::Scenario zb_h1 = scenario_for("zb-h1", equal, 4.0);
  CHECK(ppsim::lb4_warmup(zb_h1, BackwardForm::split) == Ticks{27});
  const ppsim::BoundsReport report =
      ppsim::compute_bounds(zb_h1, ppsim::bounds_options_for(ppsim::find_schedule("zb-h1")));
  CHECK(report.best_lower_bound == Ticks{27});
  CHECK(ppsim::simulate(zb_h1, ppsim::generate_schedule(ppsim::find_schedule("zb-h1"), zb_h1, {}))
            .metrics.makespan == Ticks{27});
  // Full backward adds the shortest tail: device 0 gives T1 + work - window = 10 + 24 - 4 = 30,
  // the last device 4 + 6 (its tail) + 24 - 1 = 33, LB1's (m+p-1)(F+Bf), which 1F1B meets.
  CHECK(ppsim::lb4_warmup(scenario_for("1f1b", equal, 4.0), BackwardForm::full) == Ticks{33});
  // A cap of 2: device 0's window holds 2 forwards, 7 + 24 - 2 = 29.
  CHECK(ppsim::lb4_warmup(scenario_for("zb-h1", equal, 2.0), BackwardForm::split) == Ticks{29});
}

TEST_CASE("LB4: a recompute cheaper than F lets unkept forwards fill the warm-up; no cap, no LB4") {
  // p = 2, m = 4, F = 2, B = 6, W = 1, K = 1: device 0's first B is at T1 = 2F + B = 10 and
  // its window holds one kept forward: 10 + 36 - 2 = 44. With r = 1 each of the m forwards run
  // unkept saves F - r = 1 of later work: the window may hold 2 + 4, so 10 + 36 - 6 = 40 (the
  // last device gives PF + work = 38).
  ppsim::ScenarioInput input = uniform_input(2, 4, {2, 1}, {6, 1}, {1, 1});
  CHECK(ppsim::lb4_warmup(scenario_for("zb-h1", input, 1.0), BackwardForm::split) == Ticks{44});
  input.recompute_forward = {{1, 1}};
  CHECK(ppsim::lb4_warmup(scenario_for("zb-h1", input, 1.0), BackwardForm::split) == Ticks{40});
  CHECK_FALSE(ppsim::lb4_warmup(scenario_for("zb-h1", input), BackwardForm::split).has_value());
  CHECK_FALSE(ppsim::lb4_warmup(scenario_for("zb-h1", input, 0.5), BackwardForm::split));
}
