// The executed-DAG analysis behind --explain.
#include "sim/critical_path.h"

#include "test_support.h"

#include <doctest/doctest.h>

using namespace ppsim;
using ppsim::testing::run_schedule;
using ppsim::testing::uniform_input;

TEST_CASE("1F1B p=4 m=8: the critical path has the makespan's length and a clear story") {
  const auto run = run_schedule("1f1b", uniform_input(4, 8, {1, 1}, {1, 1}, {1, 1}));
  const BubbleExplanation explanation =
      explain_bubbles(run.scenario, run.schedule, run.simulation.timing);
  CHECK(explanation.longest_path == run.simulation.metrics.makespan);
  // The path starts at time 0 and ends at the makespan, each step starting when the one
  // before it (plus its transfer) ends.
  REQUIRE_FALSE(explanation.path.empty());
  CHECK(explanation.path.front().start == Ticks{0});
  CHECK(explanation.path.back().end == run.simulation.metrics.makespan);
  for (std::size_t i = 1; i < explanation.path.size(); ++i) {
    CHECK(explanation.path[i].start == explanation.path[i - 1].end + explanation.path[i].transfer);
  }
  // Device 0 idles 9 = (p-1)(F+B+W) in its steady state and cool-down, waiting for gradients.
  Ticks device0_idle{};
  for (const IdleCause &cause : explanation.idle_causes) {
    if (cause.device == 0) {
      CHECK(cause.waiting_for == "gradient from device 1");
      device0_idle += cause.idle;
    }
  }
  CHECK(run.units(device0_idle) == 9);
  const std::string text = explanation_text(run.scenario, run.schedule, explanation);
  CHECK(text.rfind("critical path: 33 = compute 33 + transfers 0 over", 0) == 0);
  CHECK(text.find("device 0: 9 waiting for gradient from device 1") != std::string::npos);
}

TEST_CASE("latency shows up as transfers on the critical path") {
  // GPipe p=2 m=1 with c = 1: F0 -> 1 -> F1, BW1 -> 1 -> BW0: path 1+1+1+2+1+2 = 8.
  const auto run = run_schedule("gpipe", uniform_input(2, 1, {1, 1}, {1, 1}, {1, 1}, {1, 1}));
  const BubbleExplanation explanation =
      explain_bubbles(run.scenario, run.schedule, run.simulation.timing);
  CHECK(run.units(explanation.longest_path) == 8);
  const std::string text = explanation_text(run.scenario, run.schedule, explanation);
  CHECK(text.rfind("critical path: 8 = compute 6 + transfers 2 over 4 ops", 0) == 0);
  CHECK(text.find("device 1 runs F(1,0) .. BW(1,0) (2 ops) [2, 5] after F(0,0) from device 0 (+1 "
                  "transfer)") != std::string::npos);
}

TEST_CASE("each op waited for its latest input or its device's previous op") {
  // GPipe p=2 m=1 with c = 1. Entries: device 0 runs F(0,0) = 0 and BW(0,0) = 1, device 1 runs
  // F(1,0) = 2 and BW(1,0) = 3. F(0,0) waits for nothing; F(1,0) for F(0,0)'s activation; BW(1,0)
  // for F(1,0) (input and previous op at once); BW(0,0) for BW(1,0)'s gradient, which arrives
  // after F(0,0) ended.
  const auto run = run_schedule("gpipe", uniform_input(2, 1, {1, 1}, {1, 1}, {1, 1}, {1, 1}));
  const BubbleExplanation explanation =
      explain_bubbles(run.scenario, run.schedule, run.simulation.timing);
  CHECK(explanation.waited_for == std::vector<std::int32_t>{BubbleExplanation::kNoWait, 3, 0, 2});
}

TEST_CASE("an op whose inputs arrived early waited for its device's previous op") {
  // GPipe p=2 m=2 with unit costs: device 0 runs F(0,0) F(0,1) then waits; its F(0,1) needs no
  // input, so it waited for F(0,0), the op before it.
  const auto run = run_schedule("gpipe", uniform_input(2, 2, {1, 1}, {1, 1}, {1, 1}));
  const BubbleExplanation explanation =
      explain_bubbles(run.scenario, run.schedule, run.simulation.timing);
  REQUIRE(explanation.waited_for.size() == run.schedule.op_count());
  CHECK(explanation.waited_for[0] == BubbleExplanation::kNoWait);
  CHECK(explanation.waited_for[1] == 0);
}
