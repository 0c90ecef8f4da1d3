// All-remat 1F1B and ELF full remat (docs/schedules.md, "Remat schedules"; docs/oracles.md, "Bounds
// at small caps" all-remat rows).
#include "tests/sim/schedules/oracle_support.h"

#include <doctest/doctest.h>

using namespace ppsim;
using namespace ppsim::testing;

namespace {

std::vector<double> peaks(const ppsim::testing::Run &run) {
  std::vector<double> values;
  for (const ppsim::DeviceMetrics &device : run.simulation.metrics.devices) {
    values.push_back(device.peak_activations);
  }
  return values;
}

} // namespace

TEST_CASE("all-remat 1F1B oracle rows at K = 1 (remat timing early, R = F)") {
  // makespan m(2F+B) + (p-1)(F+B) - 2F: p=2 m=4 gives 12 (F=B=1) and 17 (F=1, B=2).
  const auto equal = run_schedule("allremat-1f1b", uniform_input(2, 4, {1, 1}, {1, 1}, {0, 1}));
  CHECK(equal.units(equal.simulation.metrics.makespan) == 12);
  CHECK(peaks(equal) == std::vector<double>{1, 1});
  const auto heavier = run_schedule("allremat-1f1b", uniform_input(2, 4, {1, 1}, {2, 1}, {0, 1}));
  CHECK(heavier.units(heavier.simulation.metrics.makespan) == 17);
  CHECK(peaks(heavier) == std::vector<double>{1, 1});
}

TEST_CASE("all-remat 1F1B closed form on a grid (m >= 2, F <= B), fits K = 1") {
  const std::vector<std::pair<int, int>> costs{{1, 1}, {1, 2}, {1, 3}, {2, 3}, {2, 5}};
  // p >= 2: a single device recomputes nothing and runs m(F+B).
  for (int p = 2; p <= 6; ++p) {
    for (int m = 2; m <= 4 * p; ++m) {
      for (const auto &[f, b] : costs) {
        CAPTURE(p);
        CAPTURE(m);
        CAPTURE(f);
        CAPTURE(b);
        auto input = uniform_input(p, m, {f, 1}, {b, 1}, {0, 1});
        input.cap_activations = 1.0;
        const auto run = run_schedule("allremat-1f1b", input);
        CHECK(run.units(run.simulation.metrics.makespan) ==
              m * (2 * f + b) + (p - 1) * (f + b) - 2 * f);
        CHECK(run.simulation.metrics.feasible);
      }
    }
  }
}

TEST_CASE("all-remat 1F1B inserts R right before each backward except on the last device") {
  const auto run = run_schedule("allremat-1f1b", uniform_input(2, 2, {1, 1}, {1, 1}, {0, 1}));
  const std::vector<Op> first{
      Op::make(OpKind::forward, 0, 0),           Op::make(OpKind::forward, 0, 1),
      Op::make(OpKind::recompute_forward, 0, 0), Op::make(OpKind::backward_full, 0, 0),
      Op::make(OpKind::recompute_forward, 0, 1), Op::make(OpKind::backward_full, 0, 1)};
  const std::vector<Op> last{Op::make(OpKind::forward, 1, 0), Op::make(OpKind::backward_full, 1, 0),
                             Op::make(OpKind::forward, 1, 1),
                             Op::make(OpKind::backward_full, 1, 1)};
  CHECK(run.schedule.device_ops[0] == first);
  CHECK(run.schedule.device_ops[1] == last);
}

TEST_CASE("full remat: AFAB with R on devices 0..p-2, F/BW pairs on the last device") {
  const auto run = run_schedule("full-remat", uniform_input(3, 3, {1, 1}, {2, 1}, {0, 1}));
  std::vector<Op> first;
  for (int j = 0; j < 3; ++j)
    first.push_back(Op::make(OpKind::forward, 0, j));
  for (int j = 0; j < 3; ++j) {
    first.push_back(Op::make(OpKind::recompute_forward, 0, j));
    first.push_back(Op::make(OpKind::backward_full, 0, j));
  }
  std::vector<Op> last;
  for (int j = 0; j < 3; ++j) {
    last.push_back(Op::make(OpKind::forward, 2, j));
    last.push_back(Op::make(OpKind::backward_full, 2, j));
  }
  CHECK(run.schedule.device_ops[0] == first);
  CHECK(run.schedule.device_ops[2] == last);
  // Only the recomputed activation is resident on devices 0..p-2 (checkpoints are not counted).
  CHECK(peaks(run) == std::vector<double>{1, 1, 1});
}
