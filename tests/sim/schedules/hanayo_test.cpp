// Hanayo in the ELF reference order (docs/schedules.md, "hanayo"; docs/oracles.md, "Multi-chunk
// placements" full-stage rows).
#include "base/error.h"
#include "base/index.h"
#include "sim/schedules/families.h"
#include "tests/sim/schedules/oracle_support.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace ppsim;
using namespace ppsim::testing;

namespace {

/// Full-stage costs F and Bfull (W = 0) split over the v chunks of each device.
ppsim::ScenarioInput full_stage(int p, int m, int waves, ppsim::Rational f, ppsim::Rational b) {
  auto input = uniform_input(p, m, f, b, {0, 1}, {0, 1}, 2 * waves);
  input.costs_per_device = true;
  return input;
}

} // namespace

TEST_CASE("Hanayo full-stage oracle row: p=4 m=8, one wave, F = B = 1 per device") {
  // Attains the path bound m(F+B) + (p-1)(F+B)/v = 16 + 3 = 19; peak 2 n_w m - (p-1-r).
  const auto run = run_schedule("hanayo", full_stage(4, 8, 1, {1, 1}, {1, 1}));
  CHECK(run.units(run.simulation.metrics.makespan) == 19);
  CHECK(chunk_peaks(run) == std::vector<double>{13, 14, 15, 16});
}

TEST_CASE("Hanayo device rows follow the reference order") {
  // p = 2, m = 2, one wave; device 0 holds stages 0 (descending) and 3 (ascending).
  const auto run = run_schedule("hanayo", full_stage(2, 2, 1, {1, 1}, {1, 1}));
  CHECK(orders(run.schedule)[0] == "F(0,0) F(0,1) F(3,0) BW(3,0) F(3,1) BW(3,1) BW(0,0) BW(0,1)");
}

TEST_CASE("Hanayo closed forms on a grid of p, m, waves and unequal costs") {
  // Full-stage makespan m(F + Bfull) + (p-1) max(F, Bfull) / n_w for m >= p; peak on device r
  // 2 n_w m - (p-1-r) chunks for m >= p, p <= 6 (docs/schedules.md, "hanayo").
  const std::vector<std::pair<int, int>> costs{{1, 1}, {1, 2}, {2, 1}, {2, 3}, {3, 1}};
  int checked = 0;
  for (const int p : {2, 3, 4, 5, 6, 8}) {
    for (int m = p; m <= 3 * p + 1; m += (p > 4 ? 3 : 1)) {
      for (int waves = 1; waves <= 3; ++waves) {
        for (const auto &[f, b] : costs) {
          CAPTURE(p);
          CAPTURE(m);
          CAPTURE(waves);
          CAPTURE(f);
          CAPTURE(b);
          const auto run = run_schedule("hanayo", full_stage(p, m, waves, {f, 1}, {b, 1}));
          // Exact: m(F+B) n_w + (p-1) max(F,B) over n_w, compared as integers times n_w.
          const ppsim::Rational expected{m * (f + b) * waves + (p - 1) * std::max(f, b), waves};
          CHECK(run.simulation.metrics.makespan == ppsim::testing::ticks(run, expected));
          if (p <= 6) {
            std::vector<double> peaks;
            for (int r = 0; r < p; ++r)
              peaks.push_back(2 * waves * m - (p - 1 - r));
            CHECK(chunk_peaks(run) == peaks);
          }
          ++checked;
        }
      }
    }
  }
  CHECK(checked > 200);
}

TEST_CASE("Hanayo works for m < p (deadlock-free) and needs an even v") {
  for (int p = 2; p <= 6; ++p) {
    for (int m = 1; m < p; ++m) {
      for (int waves = 1; waves <= 2; ++waves) {
        CAPTURE(p);
        CAPTURE(m);
        const auto run = run_schedule("hanayo", full_stage(p, m, waves, {1, 1}, {2, 1}));
        CHECK(run.schedule.op_count() == ppsim::at(2 * p * 2 * waves * m));
      }
    }
  }
  // The builder rejects an odd v for the V placement; the generator itself rejects v = 1 on an
  // explicit placement.
  CHECK_THROWS_AS(run_schedule("hanayo", uniform_input(2, 4, {1, 1}, {1, 1}, {1, 1}, {0, 1}, 3)),
                  ppsim::Error);
  const auto input = uniform_input(2, 4, {1, 1}, {1, 1}, {1, 1});
  const ppsim::Scenario scenario = ppsim::build_scenario_on(input, {0, 1}, 1, 1);
  CHECK_THROWS_WITH_AS(ppsim::schedules::hanayo(scenario, {}),
                       "schedule 'hanayo' needs an even v = 2 x waves, got v = 1", ppsim::Error);
}
