// ZB-V fixed rule (docs/schedules.md, "zb-v"; oracle O-11; O-19 stages-per-device error).
#include "base/error.h"
#include "base/index.h"
#include "tests/sim/schedules/oracle_support.h"

#include <doctest/doctest.h>

using namespace ppsim;
using namespace ppsim::testing;

TEST_CASE("O-11 ZB-V p=4 m=8 per-chunk F=B=W=1") {
  // span 2m(F+B+W) = 48 on every device, device r runs [r, 48 + r], peak 2p = 8 chunks.
  const auto run = run_schedule("zb-v", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  const ppsim::Metrics &metrics = run.simulation.metrics;
  CHECK(run.units(metrics.makespan) == 51);
  CHECK(per_device(run, &DeviceMetrics::span) == std::vector<double>{48, 48, 48, 48});
  CHECK(per_device(run, &DeviceMetrics::start) == std::vector<double>{0, 1, 2, 3});
  CHECK(chunk_peaks(run) == std::vector<double>{8, 8, 8, 8});
  CHECK(metrics.bubble_ratio == doctest::Approx(3.0 / 51));
  CHECK(metrics.span_bubble_ratio == 0);
}

TEST_CASE("ZB-V closed forms for F = B = W and m >= 2p-1, p <= 6") {
  // Zero span bubble: span 2m(F+B+W), start rF, makespan (p-1)F + 2m(F+B+W), peak 2p chunks.
  for (int p = 1; p <= 6; ++p) {
    for (int m = 2 * p - 1; m <= 3 * p + 1; ++m) {
      for (const int unit : {1, 2}) {
        CAPTURE(p);
        CAPTURE(m);
        const auto run = run_schedule("zb-v", uniform_input(p, m, {unit, 1}, {unit, 1}, {unit, 1}));
        std::vector<double> starts;
        for (int r = 0; r < p; ++r)
          starts.push_back(r * unit);
        CHECK(per_device(run, &DeviceMetrics::start) == starts);
        CHECK(per_device(run, &DeviceMetrics::span) ==
              std::vector<double>(ppsim::at(p), 6 * m * unit));
        CHECK(run.units(run.simulation.metrics.makespan) == (p - 1) * unit + 6 * m * unit);
        CHECK(chunk_peaks(run) == std::vector<double>(ppsim::at(p), 2 * p));
      }
    }
  }
}

TEST_CASE("ZB-V accepts any m >= 1 (surplus microbatches of the rule are dropped)") {
  for (int p = 2; p <= 5; ++p) {
    for (int m = 1; m < 2 * p - 1; ++m) {
      CAPTURE(p);
      CAPTURE(m);
      const auto run = run_schedule("zb-v", uniform_input(p, m, {1, 1}, {2, 1}, {1, 1}));
      CHECK(run.schedule.op_count() == ppsim::at(6 * p * m));
    }
  }
}

TEST_CASE("ZB-V needs exactly two stages per device") {
  CHECK_THROWS_WITH_AS(run_schedule("zb-v", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}, {0, 1}, 4)),
                       "schedule 'zb-v' needs exactly 2 stages per device (v = 2), got v = 4",
                       ppsim::Error);
}
