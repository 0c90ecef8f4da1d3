// ZB-V greedy (docs/schedules.md, "zb-v-greedy"; sail-sg zbv.py try_v_schedule / create_schedule).
#include "../test_support.h"
#include "base/error.h"
#include "base/index.h"
#include "greedy_support.h"
#include "sim/schedules/greedy.h"

#include <doctest/doctest.h>

#include <random>

using namespace ppsim;
using namespace ppsim::testing;

TEST_CASE("O-11 ZB-V greedy p=4 m=8 unit costs: max span 48 = 2m(F+B+W) under cap 2p chunks") {
  // docs/oracles.md, "V placements": the greedy with cap 2p chunks (K = p) and mem = (2, -1, -1)
  // per chunk (w_stash = 0.5) reaches the same max span as the fixed rule.
  ScenarioInput input = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  input.w_stash = 0.5;
  const auto run = run_schedule("zb-v-greedy", input);
  CHECK(run.units(run.simulation.metrics.max_span) == 48);
  for (const DeviceMetrics &device : run.simulation.metrics.devices) {
    CHECK(device.peak_activations <= 4.0); // K = p = 4 device shares = 8 chunks
  }
}

TEST_CASE("zb-v-greedy internal end times equal the engine's ASAP times and respect the cap") {
  std::mt19937 random(20241022);
  std::uniform_int_distribution<int> cost(1, 5);
  for (const int p : {1, 2, 3, 4, 5}) {
    for (const int m : {1, 2, p, 2 * p, 2 * p + 1, 3 * p}) {
      for (const double k : {1.0 * p, 1.5 * p, 2.0 * p}) {
        const int f = cost(random), b = cost(random), w = cost(random);
        ScenarioInput input = uniform_input(p, m, {f, 1}, {b, 1}, {w, 1}, {cost(random) % 2, 2});
        input.w_stash = 0.5;
        input.cap_activations = k;
        const Scenario scenario = scenario_for("zb-v-greedy", input);
        CAPTURE(p);
        CAPTURE(m);
        CAPTURE(k);
        const schedules::TimedSchedule timed = schedules::zb_v_greedy_timed(scenario, k);
        testing::check_asap_within_cap(scenario, timed.schedule, timed.end, k + 1e-9);
      }
    }
  }
}

TEST_CASE(
    "zb-v-greedy with F = B = W never beats the 2m(F+B+W) span bound and reaches it at K = p") {
  for (const int p : {2, 3, 4, 6}) {
    for (const int m : {2 * p, 3 * p}) {
      const auto run = run_schedule("zb-v-greedy", uniform_input(p, m, {1, 1}, {1, 1}, {1, 1}));
      CAPTURE(p);
      CAPTURE(m);
      CHECK(run.units(run.simulation.metrics.max_span) >= 6 * m);
    }
  }
  const auto run = run_schedule("zb-v-greedy", uniform_input(4, 12, {1, 1}, {1, 1}, {1, 1}));
  CHECK(run.units(run.simulation.metrics.max_span) == 72);
}

TEST_CASE("zb-v-greedy rejects v != 2 and caps below one forward") {
  ScenarioInput input = uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1});
  input.chunks = 4;
  CHECK_THROWS_WITH_AS(
      run_schedule("zb-v-greedy", input),
      "schedule 'zb-v-greedy' needs exactly 2 stages per device (v = 2), got v = 4", Error);
  input.chunks = 2;
  input.cap_activations = 0.25; // half a chunk: not even the first forward fits
  CHECK_THROWS_WITH_AS(run_schedule("zb-v-greedy", input),
                       "schedule 'zb-v-greedy' cannot fit memory on device 0: the cap leaves no "
                       "room for the next op",
                       Error);
}

TEST_CASE("zb-v-greedy with unequal per-stage costs still places every node after its input") {
  // The reference assumes one F, B, W for every stage; here a node whose input is not placed
  // yet waits for a later round instead of reading an unset time.
  std::mt19937 random(1893960161);
  std::uniform_int_distribution<int> cost(1, 6);
  for (const int p : {2, 3, 4, 5}) {
    for (const int m : {2 * p, 2 * p + 3, 3 * p + 2}) {
      const ScenarioInput input =
          drawn_stage_input(p, m, 2 * p, {cost(random) % 2, 2}, 3, [&] { return cost(random); });
      const Scenario scenario = scenario_for("zb-v-greedy", input);
      CAPTURE(p);
      CAPTURE(m);
      const schedules::TimedSchedule timed = schedules::zb_v_greedy_timed(scenario, p);
      CHECK(timed.schedule.op_count() == ppsim::at(6 * p * m));
      CHECK(testing::engine_ends(scenario, timed.schedule) == timed.end);
    }
  }
}

TEST_CASE("issue_16 zb-v-greedy at a cap of one activation at m = 16 runs one microbatch at a "
          "time; below it, it refuses (it used to spin until an int overflowed)") {
  // The warm-up's count of sweeps without a put was shared by all devices: after one device
  // stopped at 2, the next never saw 2 again. A forward that does not fit waits for a later
  // round, so at one device activation (both chunks of one microbatch) a device holds one
  // microbatch at a time.
  ScenarioInput input = uniform_input(4, 16, {1, 1}, {1, 1}, {1, 1});
  input.chunks = 2;
  input.cap_activations = 1;
  const Scenario scenario = scenario_for("zb-v-greedy", input);
  const schedules::TimedSchedule timed = schedules::zb_v_greedy_timed(scenario, 1);
  CHECK(timed.schedule.op_count() == ppsim::at(6 * 4 * 16));
  testing::check_asap_within_cap(scenario, timed.schedule, timed.end, 1 + 1e-9);
  input.cap_activations = 0.75; // the first chunk's forward fits, the second's does not
  CHECK_THROWS_WITH_AS(run_schedule("zb-v-greedy", input),
                       doctest::Contains("schedule 'zb-v-greedy' cannot fit memory on device"),
                       Error);
}

TEST_CASE("issue_29 zb-auto, zb-1p, zb-2p and zb-v-greedy plan in the byte model with the cost "
          "file's W stash, as the engine frees it") {
  // The bug: with byte sizes and the byte model the generators planned with the count track,
  // where W frees the whole activation, while the engine frees all but the W stash at B. A byte
  // scenario whose B keeps a quarter for W must give the same orders as the count model with
  // w_stash = 0.25 (every amount scales by the activation's bytes).
  std::mt19937 random(29);
  std::uniform_int_distribution<int> cost(1, 6);
  for (const char *name : {"zb-auto", "zb-1p", "zb-2p", "zb-v-greedy"}) {
    for (const int p : {2, 3, 4}) {
      const bool v = std::string(name) == "zb-v-greedy";
      ScenarioInput counted =
          drawn_stage_input(p, 4 * p, v ? 2 * p : p, {1, 2}, 2, [&] { return cost(random); });
      counted.chunks = v ? 2 : 1;
      counted.w_stash = 0.25;
      counted.cap_activations = p; // binds zb-auto (its default, 3m, would not)
      ScenarioInput bytes = counted;
      bytes.w_stash = 1; // the byte track takes the stash from kept_after_b
      bytes.memory_model = MemoryModel::bytes;
      bytes.bytes.activation = {1 << 20};
      bytes.bytes.kept_after_b = {1 << 18};
      CAPTURE(name);
      CAPTURE(p);
      CHECK(run_schedule(name, bytes).schedule.device_ops ==
            run_schedule(name, counted).schedule.device_ops);
    }
  }
}
