// ZB automatic heuristic (docs/schedules.md, "zb-auto"; sail-sg zb.py manual_order /
// initial_solution).
#include "../test_support.h"
#include "base/error.h"
#include "greedy_support.h"
#include "sim/schedules/greedy.h"

#include <doctest/doctest.h>

#include <random>

using namespace ppsim;
using namespace ppsim::testing;

TEST_CASE("zb-2p reaches the zero span bubble m(F+B+W) at p=4 m=8 unit costs") {
  // docs/bounds.md, "The bounds": max span >= m(F+B+W) = 24 per device, and ZB-2P reaches it.
  const auto run = run_schedule("zb-2p", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  CHECK(run.units(run.simulation.metrics.max_span) == 24);
  for (const DeviceMetrics &device : run.simulation.metrics.devices)
    CHECK(device.peak_activations <= 8);
}

TEST_CASE("zb-1p keeps 1F1B memory and is zb-auto with K = p") {
  // Cap p * mem_f per stage (docs/schedules.md, "zb-auto"): with F = B = W the heuristic finds
  // ZB-H1's (p-1)(F+B-W) = 3 span bubble, max span 27.
  const auto run = run_schedule("zb-1p", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  CHECK(run.units(run.simulation.metrics.max_span) == 27);
  for (const DeviceMetrics &device : run.simulation.metrics.devices)
    CHECK(device.peak_activations <= 4);
  ScenarioInput with_k = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  with_k.cap_activations = 4;
  const auto automatic = run_schedule("zb-auto", with_k);
  CHECK(automatic.schedule.device_ops == run.schedule.device_ops);
}

TEST_CASE("zb-auto matches the reference heuristic op for op: p=3 m=6 F=2 B=3 W=1 c=1 K=3") {
  // Output of sail-sg zb.py initial_solution (max_mem 3 x mem_f, mem = (2, -1, -1)); the same
  // comparison held op for op on p <= 6, m in {p, 2p, 2p+1, 3p}, five cost settings, four caps.
  ScenarioInput input = uniform_input(3, 6, {2, 1}, {3, 1}, {1, 1}, {1, 1});
  input.w_stash = 0.5;
  const Scenario scenario = scenario_for("zb-auto", input);
  const schedules::TimedSchedule timed = schedules::zb_auto_timed(scenario, 3);
  std::vector<std::string> rows;
  for (const auto &ops : timed.schedule.device_ops) {
    std::string text;
    for (const Op &op : ops) {
      text += (text.empty() ? "" : " ") + std::string(op_kind_token(op.kind())) +
              std::to_string(op.first.microbatch);
    }
    rows.push_back(text);
  }
  CHECK(rows == std::vector<std::string>{"F0 F1 F2 B0 W0 F3 B1 W1 F4 B2 W2 F5 B3 W3 B4 W4 B5 W5",
                                         "F0 F1 B0 F2 B1 W0 W1 F3 B2 W2 F4 B3 W3 F5 B4 W4 B5 W5",
                                         "F0 B0 F1 B1 W0 W1 F2 B2 W2 F3 B3 W3 F4 B4 W4 F5 B5 W5"});
  // The reference's score, max_s end(W(s, m-1)) - end(F(s, 0)) + f[s], is 53.
  Ticks span{0};
  for (std::size_t s = 0; s < 3; ++s) {
    span = std::max(span,
                    timed.end[s].back() - timed.end[s].front() + scenario.stage_costs[s].forward);
  }
  CHECK(span == scenario.time_scale.to_ticks({53, 1}));
}

TEST_CASE("zb-auto internal end times equal the engine's ASAP times and respect the cap") {
  std::mt19937 random(20240110);
  std::uniform_int_distribution<int> cost(1, 6);
  for (const int p : {1, 2, 3, 4, 6}) {
    for (const int m : {1, 2, p, 2 * p + 1, 3 * p}) {
      for (const double k : {1.0, 2.0, 1.0 * p, 2.0 * p, 3.0 * m}) {
        ScenarioInput input =
            drawn_stage_input(p, m, p, {cost(random) % 2, 2}, 1, [&] { return cost(random); });
        input.w_stash = 0.5; // the authors' unit tests: mem = (2, -1, -1)
        const Scenario scenario = scenario_for("zb-auto", input);
        CAPTURE(p);
        CAPTURE(m);
        CAPTURE(k);
        const schedules::TimedSchedule timed = schedules::zb_auto_timed(scenario, k);
        testing::check_asap_within_cap(scenario, timed.schedule, timed.end, k + 1e-9);
      }
    }
  }
}

TEST_CASE("zb-auto without a cap uses 3m activations and accepts m < p") {
  const auto run = run_schedule("zb-auto", uniform_input(6, 2, {1, 1}, {1, 1}, {1, 1}));
  CHECK(run.schedule.op_count() == 6u * 2u * 3u);
  // Two microbatches cannot fill a 6-deep pipeline: the span is the chain of one microbatch
  // through every stage and back (5F + 6B + 1W after device 0's first F) plus the second.
  CHECK(run.simulation.metrics.feasible);
}

TEST_CASE("zb-auto cannot fit memory: user error naming the stage") {
  ScenarioInput input = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  input.cap_activations = 0.5;
  CHECK_THROWS_WITH_AS(run_schedule("zb-auto", input),
                       "schedule 'zb-auto' cannot fit memory on stage 0: a cap of 0.5 stored "
                       "activations leaves no room for the next op",
                       Error);
  // With w_stash = 1 a B frees nothing, so K = 1 can only run F B W strictly in turn; 1.5 with
  // w_stash 0 leaves no W to flush when the second F needs room after B released everything.
  input.cap_activations = 1;
  const auto run = run_schedule("zb-auto", input);
  for (const DeviceMetrics &device : run.simulation.metrics.devices)
    CHECK(device.peak_activations == 1);
}
