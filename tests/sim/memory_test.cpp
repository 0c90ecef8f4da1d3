// Memory models of docs/model.md, "Memory models": count, byte model with transient peaks and
// parameters, recomputation (R, RBW) and the cap check naming the first op over it.
#include "sim/memory.h"

#include "test_support.h"

#include <doctest/doctest.h>

using namespace ppsim;
using ppsim::testing::uniform_input;

namespace {

Simulation run_manual(const ScenarioInput &input, std::vector<std::vector<Op>> ops) {
  static Scenario scenario;
  static Schedule schedule;
  scenario = build_scenario(input, find_schedule("1f1b"));
  schedule = Schedule{"manual", std::move(ops)};
  return simulate(scenario, schedule, SimulateOptions{true});
}

} // namespace

TEST_CASE("byte model: parameters, transient peaks and the first op over the cap") {
  // p=1, m=2, GPipe order. Resident starts at 2 x 10 parameter bytes. F adds 100 (transient 5),
  // BW frees it (transient 7): peaks 125, 225, then BW(0,0) reaches 220 + 7 = 227.
  ScenarioInput input = uniform_input(1, 2, {1, 1}, {1, 1}, {0, 1});
  input.bytes.activation = {100};
  input.bytes.parameters = {10};
  input.bytes.peak_forward = {5};
  input.bytes.peak_backward_input = {7};
  input.memory_model = MemoryModel::bytes;
  input.budget_bytes = 226;
  const Simulation simulation = run_manual(
      input, {{Op::make(OpKind::forward, 0, 0), Op::make(OpKind::forward, 0, 1),
               Op::make(OpKind::backward_full, 0, 0), Op::make(OpKind::backward_full, 0, 1)}});
  REQUIRE(simulation.metrics.devices[0].peak_bytes.has_value());
  CHECK(*simulation.metrics.devices[0].peak_bytes == 227);
  CHECK_FALSE(simulation.metrics.feasible);
  REQUIRE(simulation.metrics.violations.size() == 1);
  CHECK(simulation.metrics.violations[0].entry == 2);
  CHECK(simulation.metrics.violations[0].resident == 227);
  CHECK(simulation.metrics.violations[0].cap == 226);
  // The count model sees two microbatches at most.
  CHECK(simulation.metrics.devices[0].peak_activations == 2);
}

TEST_CASE("forward recomputation: a non-storing F holds nothing until its R") {
  // Device 0 of p=2 recomputes: F0 F1 R0 BW0 R1 BW1 keeps at most one activation (not two).
  ScenarioInput input = uniform_input(2, 2, {1, 1}, {1, 1}, {0, 1});
  input.cap_activations = 1;
  const Simulation simulation = run_manual(
      input, {{Op::make(OpKind::forward, 0, 0), Op::make(OpKind::forward, 0, 1),
               Op::make(OpKind::recompute_forward, 0, 0), Op::make(OpKind::backward_full, 0, 0),
               Op::make(OpKind::recompute_forward, 0, 1), Op::make(OpKind::backward_full, 0, 1)},
              {Op::make(OpKind::forward, 1, 0), Op::make(OpKind::backward_full, 1, 0),
               Op::make(OpKind::forward, 1, 1), Op::make(OpKind::backward_full, 1, 1)}});
  CHECK(simulation.metrics.devices[0].peak_activations == 1);
  CHECK(simulation.metrics.feasible);
  CHECK(simulation.metrics.devices[0].recompute == simulation.metrics.devices[0].busy - Ticks{4});
  // The ideal excludes recomputation: 4 ops of 1 on either device.
  CHECK(simulation.metrics.ideal == Ticks{4});
}

TEST_CASE("backward remat RBW: B drops what W needs and RBW rebuilds it") {
  // p=1, m=1, split backward, w_stash = 1: F -> 1, B -> 0 (dropped for RBW), RBW -> 1, W -> 0.
  ScenarioInput input = uniform_input(1, 1, {1, 1}, {1, 1}, {1, 1});
  const Simulation simulation =
      run_manual(input, {{Op::make(OpKind::forward, 0, 0), Op::make(OpKind::backward_input, 0, 0),
                          Op::make(OpKind::recompute_full_backward, 0, 0),
                          Op::make(OpKind::backward_weight, 0, 0)}});
  std::vector<double> resident;
  for (const MemoryPoint &point : simulation.activations.devices[0].timeline)
    resident.push_back(point.resident);
  CHECK(resident == std::vector<double>{0, 1, 1, 1, 0, 1, 1, 1, 0});
}

TEST_CASE("w_stash splits the release between B and W") {
  // 1F1B-split p=1 m=2 with w_stash = 0.5: F0 (1), B0 (0.5), W0 (0), F1 (1), ...: peak 1;
  // a GPipe-like order F0 F1 B0 B1 W0 W1 peaks at 2 and holds 1 after both B's.
  ScenarioInput input = uniform_input(1, 2, {1, 1}, {1, 1}, {1, 1});
  input.w_stash = 0.5;
  const Simulation simulation = run_manual(
      input, {{Op::make(OpKind::forward, 0, 0), Op::make(OpKind::forward, 0, 1),
               Op::make(OpKind::backward_input, 0, 0), Op::make(OpKind::backward_input, 0, 1),
               Op::make(OpKind::backward_weight, 0, 0), Op::make(OpKind::backward_weight, 0, 1)}});
  const auto &timeline = simulation.activations.devices[0].timeline;
  CHECK(simulation.metrics.devices[0].peak_activations == 2);
  CHECK(timeline[6].resident == 1.5); // after the first B
  CHECK(timeline[8].resident == 1);   // after the second B
}

TEST_CASE("byte model RBW keeps the checkpoint after B and rebuilds the rest (docs/remat.md)") {
  // M_f = M_b = 100, ck = 10, Pk_f = 5, Pk_b = 7: F -> 100, B drops M_b - ck -> 10, RBW
  // rebuilds 90 with transient max(Pk_f, M_f - ck + Pk_b) = 97 (peak 10 + 90 + 97 = 197), W -> 0.
  ScenarioInput input = uniform_input(1, 1, {1, 1}, {1, 1}, {1, 1});
  input.bytes.activation = {100};
  input.bytes.checkpoint = {10};
  input.bytes.peak_forward = {5};
  input.bytes.peak_backward_input = {7};
  const Simulation simulation =
      run_manual(input, {{Op::make(OpKind::forward, 0, 0), Op::make(OpKind::backward_input, 0, 0),
                          Op::make(OpKind::recompute_full_backward, 0, 0),
                          Op::make(OpKind::backward_weight, 0, 0)}});
  REQUIRE(simulation.bytes.has_value());
  std::vector<double> resident;
  for (const MemoryPoint &point : simulation.bytes->devices[0].timeline)
    resident.push_back(point.resident);
  CHECK(resident == std::vector<double>{0, 100, 100, 100, 10, 100, 100, 100, 0});
  CHECK(simulation.bytes->devices[0].peak == 197);
}
