// ZB-H1 and ZB-H2 (docs/schedules.md, "zb-h1 and zb-h2"; oracles O-4, O-5 and the split-backward
// table).
#include "base/error.h"
#include "base/index.h"
#include "sim/op_locator.h"
#include "tests/sim/schedules/oracle_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <utility>

using namespace ppsim;
using namespace ppsim::testing;

namespace {

/// Largest (#F - #B, #B - #W) reached along each device's list.
std::vector<std::pair<int, int>> max_outstanding(const ppsim::Schedule &schedule) {
  std::vector<std::pair<int, int>> result;
  for (const auto &ops : schedule.device_ops) {
    int forwards = 0, inputs = 0, weights = 0;
    std::pair<int, int> worst{0, 0};
    for (const ppsim::Op &op : ops) {
      forwards += op.kind() == OpKind::forward;
      inputs += op.kind() == OpKind::backward_input;
      weights += op.kind() == OpKind::backward_weight;
      worst = {std::max(worst.first, forwards - inputs), std::max(worst.second, inputs - weights)};
    }
    result.push_back(worst);
  }
  return result;
}

// Runs schedule `name` at p = 1..6, m = first_m(p)..3p and each (F, B, W) of `costs`, and
// calls check(run, p, m, F, B, W) with the point captured for failure messages.
template <typename FirstM, typename Check>
void on_grid(const std::string &name, FirstM first_m, const std::vector<std::array<int, 3>> &costs,
             Check check) {
  for (int p = 1; p <= 6; ++p) {
    for (int m = first_m(p); m <= 3 * p; ++m) {
      for (const auto &[f, b, w] : costs) {
        CAPTURE(p);
        CAPTURE(m);
        CAPTURE(f);
        CAPTURE(b);
        CAPTURE(w);
        check(run_schedule(name, uniform_input(p, m, {f, 1}, {b, 1}, {w, 1})), p, m, f, b, w);
      }
    }
  }
}

} // namespace

TEST_CASE("O-4 ZB-H1 p=4 m=8 F=B=W=1") {
  // makespan m(F+B+W) + (p-1)(F+B-W) = 27, every device ends at 27, idle [3,2,1,0].
  const auto run = run_schedule("zb-h1", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  CHECK(run.units(run.simulation.metrics.makespan) == 27);
  CHECK(per_device(run, &DeviceMetrics::end) == std::vector<double>{27, 27, 27, 27});
  CHECK(per_device(run, &DeviceMetrics::busy) == std::vector<double>{24, 24, 24, 24});
  CHECK(per_device(run, &DeviceMetrics::idle) == std::vector<double>{3, 2, 1, 0});
  CHECK(chunk_peaks(run) == std::vector<double>{4, 4, 4, 4});
  CHECK(max_outstanding(run.schedule) ==
        std::vector<std::pair<int, int>>{{4, 1}, {3, 2}, {2, 3}, {1, 4}});
  CHECK(run.units(max_idle(run)) == 3);

  // Three-term memory with w_stash = 32h/(34h+5as) = 16/37 (h=4096, a=32, s=1024):
  // peak / M_F = [4, 127/37, 106/37, 85/37].
  auto transformer = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  transformer.w_stash = 16.0 / 37.0;
  const auto three_term = run_schedule("zb-h1", transformer);
  const std::vector<double> expected{4, 127.0 / 37, 106.0 / 37, 85.0 / 37};
  for (std::size_t r = 0; r < expected.size(); ++r) {
    CHECK(three_term.simulation.metrics.devices[r].peak_activations ==
          doctest::Approx(expected[r]));
  }

  // The same model in the zero-bubble code's terms (memory_model "zb", GraphConfig signs):
  // mem_f = 34h + 5as = 303104 bytes, mem_w = -32h = -131072; 303104 / 37 = 8192 exactly.
  auto zb_terms = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  zb_terms.memory_model = ppsim::MemoryModel::zb;
  zb_terms.zb_mem_f = {303104};
  zb_terms.zb_mem_w = {-131072};
  const auto zb_run = run_schedule("zb-h1", zb_terms);
  CHECK(chunk_peaks(zb_run) == std::vector<double>{4 * 303104, 127 * 8192, 106 * 8192, 85 * 8192});

  zb_terms.zb_mem_w = {131072}; // a W that adds memory is not the three-term model
  CHECK_THROWS_WITH_AS(run_schedule("zb-h1", zb_terms),
                       "field 'model.memory.mem_w': expected -mem_f <= mem_w <= 0", ppsim::Error);
}

TEST_CASE("O-5 ZB-H2 p=4 m=8 F=B=W=1: zero span bubble") {
  const auto run = run_schedule("zb-h2", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  const ppsim::Metrics &metrics = run.simulation.metrics;
  CHECK(run.units(metrics.makespan) == 27);
  CHECK(per_device(run, &DeviceMetrics::span) == std::vector<double>{24, 24, 24, 24});
  CHECK(per_device(run, &DeviceMetrics::start) == std::vector<double>{0, 1, 2, 3});
  CHECK(per_device(run, &DeviceMetrics::end) == std::vector<double>{24, 25, 26, 27});
  CHECK(chunk_peaks(run) == std::vector<double>{7, 7, 7, 7});
  CHECK(metrics.bubble_ratio == doctest::Approx(3.0 / 27));
  CHECK(metrics.span_bubble_ratio == 0);
  CHECK(run.units(metrics.max_span) == 24);
  CHECK(run.units(max_idle(run)) == 0);
}

TEST_CASE("ZB-H1 closed forms on a grid (m >= p, W <= min(F, B))") {
  // max(span - busy) = (p-1)(F+B-W) on device 0; makespan m(F+B+W) + (p-1)(F+B-W);
  // peak min(p, m); max outstanding (F-B, B-W) on device r = (p-r, r+1) (docs/schedules.md, "zb-h1
  // and zb-h2").
  const std::vector<std::array<int, 3>> costs{{1, 1, 1}, {2, 1, 1}, {1, 2, 1},
                                              {3, 2, 1}, {2, 3, 2}, {2, 2, 0}};
  on_grid(
      "zb-h1", [](int p) { return p; }, costs,
      [](const Run &run, int p, int m, int f, int b, int w) {
        CHECK(run.units(run.simulation.metrics.makespan) ==
              m * (f + b + w) + (p - 1) * (f + b - w));
        CHECK(run.units(max_idle(run)) == (p - 1) * (f + b - w));
        CHECK(chunk_peaks(run) == std::vector<double>(ppsim::at(p), std::min(p, m)));
        std::vector<std::pair<int, int>> outstanding; // (F-B, B-W) = (p-r, r+1)
        for (int r = 0; r < p; ++r)
          outstanding.emplace_back(p - r, r + 1);
        CHECK(max_outstanding(run.schedule) == outstanding);
      });
}

TEST_CASE("ZB-H2 closed forms on a grid (m >= 2p-1)") {
  // max(span - busy) = max(0, (p-1)(F+B-2W)); device r starts at rF; peak min(2p-1, m);
  // F = B = W: makespan (p-1)F + m(F+B+W) (docs/schedules.md, "zb-h1 and zb-h2").
  const std::vector<std::array<int, 3>> costs{{1, 1, 1}, {2, 1, 1}, {1, 2, 1},
                                              {3, 2, 1}, {1, 1, 2}, {2, 2, 2}};
  on_grid(
      "zb-h2", [](int p) { return 2 * p - 1; }, costs,
      [](const Run &run, int p, int m, int f, int b, int w) {
        CHECK(run.units(max_idle(run)) == std::max(0, (p - 1) * (f + b - 2 * w)));
        std::vector<double> starts;
        for (int r = 0; r < p; ++r)
          starts.push_back(r * f);
        CHECK(per_device(run, &DeviceMetrics::start) == starts);
        CHECK(chunk_peaks(run) == std::vector<double>(ppsim::at(p), std::min(2 * p - 1, m)));
        if (f == b && b == w) {
          CHECK(run.units(run.simulation.metrics.makespan) == (p - 1) * f + m * (f + b + w));
        }
      });
}

TEST_CASE("ZB-H2 with latency: span bubble (p-1)(F+B+2c-2W) (sail-sg evaluator)") {
  const auto run = run_schedule("zb-h2", uniform_input(4, 8, {2, 1}, {2, 1}, {1, 1}, {1, 2}));
  CHECK(run.units(max_idle(run)) == 3 * (2 + 2 + 1 - 2));
}

TEST_CASE("ZB-H1/H2 with m < p defer every W to the end and still run") {
  for (const char *name : {"zb-h1", "zb-h2"}) {
    const auto run = run_schedule(name, uniform_input(5, 2, {1, 1}, {2, 1}, {1, 1}));
    const auto &last = run.schedule.device_ops.back();
    CHECK(last.back().kind() == OpKind::backward_weight);
    CHECK(run.schedule.op_count() == 5u * 2 * 3);
  }
}

namespace {

// The paper's literal rule ("W once k(p-1) forwards were issued before it"), which for
// 2 <= m < k(p-1) defers k(p-1) - m weight gradients: the reference the ppsim rule is held to.
ppsim::Schedule literal_rule(const ppsim::Schedule &shape, int p, int m, int k) {
  ppsim::Schedule schedule = shape;
  for (int r = 0; r < p; ++r) {
    auto &ops = schedule.device_ops[ppsim::at(r)];
    ops.clear();
    const int warmup = std::min(k * (p - 1 - r), m);
    int next_forward = 0, next_weight = 0;
    for (; next_forward < warmup; ++next_forward)
      ops.push_back(ppsim::Op::make(OpKind::forward, r, next_forward));
    for (int i = 0; i < m; ++i) {
      if (warmup + i < m)
        ops.push_back(ppsim::Op::make(OpKind::forward, r, next_forward++));
      ops.push_back(ppsim::Op::make(OpKind::backward_input, r, i));
      if (warmup + i >= k * (p - 1))
        ops.push_back(ppsim::Op::make(OpKind::backward_weight, r, next_weight++));
    }
    while (next_weight < m)
      ops.push_back(ppsim::Op::make(OpKind::backward_weight, r, next_weight++));
  }
  return schedule;
}

} // namespace

TEST_CASE("issue_16 ZB-H1/H2 defer k r weight gradients on device r for every m (ELF's rule)") {
  // ELF's unit rows: zb-h1 p = 4, m = 2 ends at 11 (the literal rule: 12); zb-h2 p = 4, m = 3 at 14
  // (15).
  CHECK(run_schedule("zb-h1", uniform_input(4, 2, {1, 1}, {1, 1}, {1, 1}))
            .simulation.metrics.makespan.count() == 11);
  CHECK(run_schedule("zb-h2", uniform_input(4, 3, {1, 1}, {1, 1}, {1, 1}))
            .simulation.metrics.makespan.count() == 14);
  // Never slower and never more memory than the literal rule; the same schedule once m >= k(p-1).
  for (int k = 1; k <= 2; ++k) {
    for (int p = 2; p <= 6; ++p) {
      for (int m = 1; m <= 3 * p; ++m) {
        CAPTURE(k);
        CAPTURE(p);
        CAPTURE(m);
        const auto run =
            run_schedule(k == 1 ? "zb-h1" : "zb-h2", uniform_input(p, m, {1, 1}, {2, 1}, {1, 1}));
        const ppsim::Schedule literal = literal_rule(run.schedule, p, m, k);
        const ppsim::Simulation old = ppsim::simulate(run.scenario, literal);
        CHECK(run.simulation.metrics.makespan <= old.metrics.makespan);
        CHECK(run.simulation.metrics.max_peak_activations() <=
              old.metrics.max_peak_activations() + 1e-9);
        if (m >= k * (p - 1))
          CHECK(run.schedule.device_ops == literal.device_ops);
      }
    }
  }
}
