// sim/scenario: op durations under a stage's costs, and the pipe-structure helpers.
#include "sim/scenario.h"

#include "base/assert.h"

#include <doctest/doctest.h>

using ppsim::Op;
using ppsim::op_duration;
using ppsim::OpKind;
using ppsim::OpRef;
using ppsim::Scenario;
using ppsim::Ticks;

namespace {

/// Two stages on two devices with pairwise distinct (prime) costs, so a wrong field shows.
Scenario two_stages() {
  Scenario scenario;
  scenario.devices = 2;
  scenario.stage_device = {0, 1};
  ppsim::StageCosts first;
  first.forward = Ticks{2};
  first.backward_input = Ticks{3};
  first.backward_weight = Ticks{5};
  first.recompute_forward = Ticks{7};
  first.recompute_weight_inputs = Ticks{11};
  first.recompute_full_backward = Ticks{13};
  first.checkpoint_level_recompute = {Ticks{17}, Ticks{19}};
  ppsim::StageCosts second;
  second.forward = Ticks{23};
  second.backward_input = Ticks{29};
  second.backward_weight = Ticks{31};
  scenario.stage_costs = {first, second};
  return scenario;
}

Ticks duration(const Scenario &scenario, OpKind kind, int stage, std::uint8_t level = 0) {
  return op_duration(scenario, Op::make(kind, stage, 0, level));
}

} // namespace

TEST_CASE("op_duration reads each kind's cost, BW being B + W") {
  const Scenario scenario = two_stages();
  CHECK(duration(scenario, OpKind::forward, 0) == Ticks{2});
  CHECK(duration(scenario, OpKind::backward_input, 0) == Ticks{3});
  CHECK(duration(scenario, OpKind::backward_weight, 0) == Ticks{5});
  CHECK(duration(scenario, OpKind::backward_full, 0) == Ticks{8});
  CHECK(duration(scenario, OpKind::recompute_forward, 0) == Ticks{7});
  CHECK(duration(scenario, OpKind::recompute_weight_inputs, 0) == Ticks{11});
  CHECK(duration(scenario, OpKind::recompute_full_backward, 0) == Ticks{13});
  CHECK(duration(scenario, OpKind::forward, 1) == Ticks{23});
  CHECK(duration(scenario, OpKind::backward_full, 1) == Ticks{60});
}

TEST_CASE("op_duration of an R at checkpoint level k is the level's recompute") {
  const Scenario scenario = two_stages();
  CHECK(duration(scenario, OpKind::recompute_forward, 0, 1) == Ticks{17});
  CHECK(duration(scenario, OpKind::recompute_forward, 0, 2) == Ticks{19});
  CHECK_THROWS_AS(duration(scenario, OpKind::recompute_forward, 0, 3), ppsim::InternalError);
  CHECK_THROWS_AS(duration(scenario, OpKind::recompute_forward, 1, 1), ppsim::InternalError);
}

TEST_CASE("op_duration of an OV is its sub-ops back to back unless the scenario sets F&B") {
  Scenario scenario = two_stages();
  const Op overlapped = Op::overlap({OpKind::forward, 0, 0}, {OpKind::backward_full, 1, 0});
  const Op split = Op::overlap({OpKind::forward, 1, 0}, {OpKind::backward_input, 0, 0});
  CHECK(op_duration(scenario, overlapped) == Ticks{2 + 29 + 31});
  CHECK(op_duration(scenario, split) == Ticks{23 + 3});
  scenario.overlap_duration = Ticks{40};
  CHECK(op_duration(scenario, overlapped) == Ticks{40});
  CHECK(op_duration(scenario, split) == Ticks{40});
}

TEST_CASE("op_duration asserts the stage exists") {
  const Scenario scenario = two_stages();
  CHECK_THROWS_AS(duration(scenario, OpKind::forward, 2), ppsim::InternalError);
  CHECK_THROWS_AS(duration(scenario, OpKind::forward, -1), ppsim::InternalError);
}

TEST_CASE("pipe entry and exit stages, single pipe and DualPipe") {
  Scenario single;
  single.stage_device = {0, 1, 2, 0, 1, 2};
  single.chunks = 2;
  single.microbatches = 8;
  CHECK(single.stage_count() == 6);
  CHECK(single.stages_per_pipe() == 6);
  CHECK(single.total_microbatches() == 8);
  for (int s = 0; s < 6; ++s) {
    CAPTURE(s);
    CHECK(single.is_pipe_entry(s) == (s == 0));
    CHECK(single.is_pipe_exit(s) == (s == 5));
  }
  Scenario dual;
  dual.stage_device = {0, 1, 2, 2, 1, 0};
  dual.pipes = 2;
  dual.microbatches = 4; // per pipe
  CHECK(dual.stages_per_pipe() == 3);
  CHECK(dual.total_microbatches() == 8);
  for (int s = 0; s < 6; ++s) {
    CAPTURE(s);
    CHECK(dual.is_pipe_entry(s) == (s == 0 || s == 3));
    CHECK(dual.is_pipe_exit(s) == (s == 2 || s == 5));
  }
}

TEST_CASE("most_checkpoint_levels is the largest level count of any stage") {
  Scenario scenario = two_stages();
  CHECK(scenario.most_checkpoint_levels() == 2);
  scenario.stage_costs[1].checkpoint_level_recompute = {Ticks{1}, Ticks{2}, Ticks{3}};
  CHECK(scenario.most_checkpoint_levels() == 3);
  CHECK(Scenario{}.most_checkpoint_levels() == 0);
}
