// The engine's one-pass replay against the event-driven replay it replaced
// (tests/sim/event_replay.h): every op's start and end and every transfer identical, links with
// latency, bandwidth, contention and blocking sends, recomputation and overlapped ops from the
// registry; a deadlocking order refused with the same message.
#include "event_replay.h"
#include "random_orders.h"
#include "test_support.h"

#include "base/error.h"
#include "sim/engine.h"
#include "sim/retime.h"
#include "sim/schedules/registry.h"
#include "sim/validate.h"

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <tuple>

using namespace ppsim;
using ppsim::testing::random_case;
using ppsim::testing::RandomCase;

namespace {

auto fields(const Transfer &t) {
  return std::tuple(t.producer, t.consumer, t.from_device, t.to_device, t.start, t.end);
}

// The engine's outcome (timing or deadlock message) equals the oracle's; true when it timed.
bool check_equals_oracle(const Scenario &scenario, const Schedule &schedule) {
  std::string expected_error;
  Timing expected;
  try {
    expected = testing::event_replay(scenario, schedule);
  } catch (const Error &error) {
    expected_error = error.what();
  }
  std::string error;
  Timing timing;
  try {
    timing = Engine(scenario, schedule).run();
  } catch (const Error &caught) {
    error = caught.what();
  }
  CHECK(error == expected_error);
  if (!error.empty())
    return false;
  CHECK(timing.start == expected.start);
  CHECK(timing.end == expected.end);
  REQUIRE(timing.transfers.size() == expected.transfers.size());
  int differing = 0;
  for (std::size_t k = 0; k < timing.transfers.size(); ++k)
    differing += fields(timing.transfers[k]) == fields(expected.transfers[k]) ? 0 : 1;
  CHECK(differing == 0);
  // Without the transfers (what simulate keeps without timelines) the times are the same.
  const Timing bare = Engine(scenario, schedule).run(false);
  CHECK(bare.transfers.empty());
  CHECK(bare.start == timing.start);
  CHECK(bare.end == timing.end);
  return true;
}

} // namespace

TEST_CASE("the engine equals the event-driven replay on 300 random valid orders and links") {
  std::mt19937 random(20261207);
  for (int trial = 0; trial < 300; ++trial) {
    CAPTURE(trial);
    const RandomCase c = random_case(random, trial % 3 != 0, trial % 2 == 0);
    CHECK(check_equals_oracle(c.scenario, c.schedule));
  }
}

TEST_CASE("the engine equals the event-driven replay on every registered schedule") {
  // Non-uniform costs, latency, bandwidth, contention, blocking sends and lumped recomputation
  // timing: the recomputation schedules bring R, RW and RBW, DualPipe its overlapped pairs.
  std::mt19937 random(33);
  int timed = 0;
  for (const ScheduleInfo &info : schedule_registry()) {
    for (int trial = 0; trial < 6; ++trial) {
      CAPTURE(info.name);
      CAPTURE(trial);
      const std::optional<RandomCase> c =
          testing::random_registry_case(info, trial, random, trial % 3 == 2);
      if (c)
        timed += check_equals_oracle(c->scenario, c->schedule) ? 1 : 0;
    }
  }
  CHECK(timed >= 6 * static_cast<int>(schedule_registry().size()) / 2);
}

TEST_CASE("a deadlocking order is refused with the event-driven replay's message") {
  // Random adjacent swaps of a valid order: many deadlock, some still run.
  std::mt19937 random(7);
  int deadlocked = 0;
  int timed = 0;
  for (int trial = 0; trial < 200; ++trial) {
    CAPTURE(trial);
    RandomCase c = random_case(random, trial % 2 == 0, trial % 3 == 0);
    for (int swap = 0; swap < 3; ++swap) {
      auto &ops = c.schedule.device_ops[at(std::uniform_int_distribution<int>(
          0, c.schedule.device_count() - 1)(random))];
      if (ops.size() < 2)
        continue;
      const auto position = std::uniform_int_distribution<std::size_t>(0, ops.size() - 2)(random);
      std::swap(ops[position], ops[position + 1]);
    }
    if (check_equals_oracle(c.scenario, c.schedule))
      ++timed;
    else
      ++deadlocked;
  }
  CHECK(deadlocked > 20);
  CHECK(timed > 20);
}

TEST_CASE("a deadlock names, of two inputs that never ran, the one of the lower entry") {
  // V-shape p = 2 (stages 0..3 on devices 0, 1, 1, 0), lumped recomputation: device 1 lists
  // R(2,0) first, which waits for F(2,0) (later on device 1) and for the gradient B(3,0) (an
  // entry of device 0, so lower); the engine's successor lists met B(3,0) first.
  ScenarioInput input;
  input.devices = 2;
  input.microbatches = 1;
  input.remat_timing = RematTiming::lumped;
  const Scenario scenario = build_scenario_on(input, {0, 1, 1, 0}, 2, 1);
  const auto op = [](OpKind kind, int stage) { return Op::make(kind, stage, 0); };
  Schedule schedule;
  schedule.name = "lumped";
  schedule.device_ops = {
      {op(OpKind::forward, 0), op(OpKind::forward, 3), op(OpKind::backward_full, 3),
       op(OpKind::backward_full, 0)},
      {op(OpKind::recompute_forward, 2), op(OpKind::forward, 1), op(OpKind::forward, 2),
       op(OpKind::backward_full, 2), op(OpKind::backward_full, 1)}};
  const std::string message =
      "schedule 'lumped' deadlocks: device 0 waits at F(3,0) for F(2,0); device 1 waits at "
      "R(2,0) for BW(3,0)";
  CHECK_THROWS_WITH_AS(testing::event_replay(scenario, schedule), message.c_str(), Error);
  CHECK_THROWS_WITH_AS(Engine(scenario, schedule).run(), message.c_str(), Error);
  CHECK_THROWS_WITH_AS(Retimer(scenario, schedule), message.c_str(), Error);
}
