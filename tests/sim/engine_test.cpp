// Oracles of docs/oracles.md, "Single wave, full backward" (GPipe, 1F1B) and engine semantics
// (docs/model.md, "Engine").
#include "base/index.h"
#include "sim/engine.h"
#include "sim/metrics.h"

#include "base/error.h"
#include "base/parallel.h"
#include "test_support.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <vector>

using namespace ppsim;
using ppsim::testing::run_schedule;
using ppsim::testing::uniform_input;

namespace {

std::vector<double> device_values(const testing::Run &run, Ticks DeviceMetrics::*member) {
  std::vector<double> values;
  for (const DeviceMetrics &device : run.simulation.metrics.devices)
    values.push_back(run.units(device.*member));
  return values;
}

std::vector<double> peaks(const testing::Run &run) {
  std::vector<double> values;
  for (const DeviceMetrics &device : run.simulation.metrics.devices)
    values.push_back(device.peak_activations);
  return values;
}

} // namespace

TEST_CASE("O-1 1F1B p=4 m=8 F=B=W=1") {
  // makespan (m+p-1)(F+B+W) = 33; device r starts at rF, ends at 33 - r(B+W); peak min(p-r, m).
  const auto run = run_schedule("1f1b", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  const Metrics &metrics = run.simulation.metrics;
  CHECK(run.units(metrics.makespan) == 33);
  CHECK(device_values(run, &DeviceMetrics::start) == std::vector<double>{0, 1, 2, 3});
  CHECK(device_values(run, &DeviceMetrics::end) == std::vector<double>{33, 31, 29, 27});
  CHECK(device_values(run, &DeviceMetrics::busy) == std::vector<double>{24, 24, 24, 24});
  CHECK(device_values(run, &DeviceMetrics::idle) == std::vector<double>{9, 6, 3, 0});
  CHECK(peaks(run) == std::vector<double>{4, 3, 2, 1});
  CHECK(metrics.bubble_ratio == doctest::Approx(9.0 / 33));
  CHECK(metrics.span_bubble_ratio == doctest::Approx(9.0 / 33));
  CHECK(metrics.feasible);
}

TEST_CASE("O-2 GPipe p=4 m=8, with and without latency") {
  // makespan (m+p-1)(F+B+W) + 2(p-1)c; peak m on every device.
  const auto plain = run_schedule("gpipe", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  CHECK(plain.units(plain.simulation.metrics.makespan) == 33);
  CHECK(peaks(plain) == std::vector<double>{8, 8, 8, 8});
  const auto latency = run_schedule("gpipe", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}, {1, 2}));
  CHECK(latency.simulation.metrics.makespan == testing::ticks(latency, {36, 1}));
}

TEST_CASE("O-3 1F1B with latency c=0.5 pays the round trip in steady state") {
  const auto run = run_schedule("1f1b", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}, {1, 2}));
  CHECK(run.simulation.metrics.makespan == testing::ticks(run, {41, 1}));
}

TEST_CASE("full-backward single-wave table of docs/oracles.md") {
  struct Row {
    const char *schedule;
    int p, m, f, b, c, makespan;
    std::vector<double> peak;
  };
  const std::vector<Row> rows{
      {"1f1b", 4, 8, 1, 2, 0, 33, {4, 3, 2, 1}}, {"gpipe", 4, 8, 1, 2, 0, 33, {8, 8, 8, 8}},
      {"1f1b", 4, 4, 1, 2, 0, 21, {4, 3, 2, 1}}, {"gpipe", 4, 4, 1, 2, 0, 21, {4, 4, 4, 4}},
      {"1f1b", 3, 7, 1, 2, 0, 27, {3, 2, 1}},    {"gpipe", 3, 7, 1, 2, 0, 27, {7, 7, 7}},
      {"1f1b", 4, 8, 1, 1, 0, 22, {4, 3, 2, 1}}, {"gpipe", 4, 8, 1, 1, 0, 22, {8, 8, 8, 8}},
      {"1f1b", 2, 5, 1, 1, 0, 12, {2, 1}},       {"gpipe", 2, 5, 1, 1, 0, 12, {5, 5}},
      {"1f1b", 4, 8, 1, 2, 1, 49, {4, 3, 2, 1}},
  };
  for (const Row &row : rows) {
    CAPTURE(row.schedule);
    CAPTURE(row.p);
    CAPTURE(row.m);
    const auto run = run_schedule(
        row.schedule, uniform_input(row.p, row.m, {row.f, 1}, {row.b, 1}, {0, 1}, {row.c, 1}));
    CHECK(run.units(run.simulation.metrics.makespan) == row.makespan);
    CHECK(peaks(run) == row.peak);
  }
}

TEST_CASE("1F1B split (W right after B): the upstream B does not wait for W") {
  // m(F+B+W) + (p-1)(F+B) = 24 + 6 = 30; a bug that makes B wait for W would give 33.
  const auto run = run_schedule("1f1b-split", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  CHECK(run.units(run.simulation.metrics.makespan) == 30);
  CHECK(peaks(run) == std::vector<double>{4, 3, 2, 1});
}

TEST_CASE("a cross-device cycle is reported as a deadlock naming the blocked ops") {
  const ScenarioInput input = uniform_input(2, 1, {1, 1}, {1, 1}, {0, 1});
  const Scenario scenario = build_scenario(input, find_schedule("1f1b"));
  Schedule schedule;
  schedule.name = "cyclic";
  // Device 0 insists on its backward before its forward can feed device 1: never finishes.
  schedule.device_ops = {{Op::make(OpKind::forward, 0, 0), Op::make(OpKind::backward_full, 0, 0)},
                         {Op::make(OpKind::backward_full, 1, 0), Op::make(OpKind::forward, 1, 0)}};
  const Engine engine(scenario, schedule);
  CHECK_THROWS_WITH_AS(engine.run(),
                       "schedule 'cyclic' deadlocks: device 0 waits at BW(0,0) for BW(1,0); "
                       "device 1 waits at BW(1,0) for F(1,0)",
                       Error);
}

TEST_CASE("mean wait before the backward ops: the pipeline bubble Lynx fills") {
  // 1F1B p=2 m=4, F = 2, BW = 4: device 0 runs F0 F1 BW0 F2 BW1 F3 BW2 BW3 and waits 4 before
  // BW0 (until device 1's BW0 ends at 8), 0 before BW1 and BW2, 2 before BW3: mean 6/4. The last
  // device never waits for a gradient.
  const auto run = run_schedule("1f1b", uniform_input(2, 4, {2, 1}, {2, 1}, {2, 1}));
  CHECK(mean_wait_before_backward(run.scenario, run.schedule, run.simulation.timing) ==
        std::vector<double>{1.5, 0});
  // Split backward: ZB-H1 p=4 m=8 F=B=W=1: device r's first B waits p-1-r for the gradient (the
  // idle of O-4), the steady state never waits, so the means are (p-1-r)/m.
  const auto zb = run_schedule("zb-h1", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  CHECK(mean_wait_before_backward(zb.scenario, zb.schedule, zb.simulation.timing) ==
        std::vector<double>{3.0 / 8, 2.0 / 8, 1.0 / 8, 0});
}

TEST_CASE("issue_16 GPipe (AFAB) with two stages per device: ELF's order, timed by hand") {
  // p = 2, v = 2, m = 2, one chunk costs F = B = W = 1 (BW = 2), stage s on device s mod 2.
  // Device 0: F(0,0) F(2,0) F(0,1) F(2,1) then BW(2,0) BW(0,0) BW(2,1) BW(0,1); device 1 the
  // same with stages 1, 3. The forwards end at 7 on device 1, then every BW waits for the one
  // downstream: 7-9, 9-11, 11-13, 13-15 and 13-15, 15-17, 17-19, 19-21.
  ScenarioInput input = uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1});
  input.chunks = 2;
  const auto run = run_schedule("gpipe", input);
  CHECK(run.schedule.device_ops[0][1] == Op::make(OpKind::forward, 2, 0));
  CHECK(run.schedule.device_ops[0][4] == Op::make(OpKind::backward_full, 2, 0));
  CHECK(run.units(run.simulation.metrics.makespan) == 21);
  CHECK(device_values(run, &DeviceMetrics::busy) == std::vector<double>{12, 12});
  // Every chunk of every microbatch is stored before the first backward: 2 x 2 per device.
  CHECK(peaks(run) == std::vector<double>{2, 2});
}

TEST_CASE("issue_17 run_on_threads: every task once, whatever the thread count") {
  for (const unsigned threads : {1u, 2u, 7u, 64u}) {
    CAPTURE(threads);
    std::atomic<int> next{0};
    std::vector<std::atomic<int>> done(500);
    ppsim::run_on_threads(threads, [&] {
      for (int k = next++; k < 500; k = next++)
        ++done[ppsim::at(k)];
    });
    CHECK(std::all_of(done.begin(), done.end(), [](const std::atomic<int> &d) { return d == 1; }));
  }
}

TEST_CASE("issue_17 run_on_threads rethrows a worker's exception after joining every thread") {
  std::atomic<int> next{0};
  const auto run = [&] {
    ppsim::run_on_threads(4, [&] {
      for (int k = next++; k < 100; k = next++) {
        if (k == 37)
          throw std::runtime_error("task 37 failed");
      }
    });
  };
  CHECK_THROWS_WITH_AS(run(), "task 37 failed", std::runtime_error);
}
