// sim/dependencies: the cross-op edges of docs/model.md, "Dependencies", grouped by producer.
#include "base/index.h"
#include "sim/dependencies.h"

#include "base/error.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using ppsim::Dependency;
using ppsim::DependencyGraph;
using ppsim::Op;
using ppsim::OpKind;
using ppsim::OpLocator;
using ppsim::OpRef;
using ppsim::Scenario;
using ppsim::Schedule;
using ppsim::Ticks;

namespace {

Op make(OpKind kind, int stage, int microbatch) { return Op::make(kind, stage, microbatch); }

/// p stages on p devices, one pipe; every boundary costs `transfer` ticks.
Scenario single_wave(int p, Ticks transfer) {
  Scenario scenario;
  scenario.devices = p;
  for (int s = 0; s < p; ++s)
    scenario.stage_device.push_back(s);
  scenario.stage_costs.resize(ppsim::at(p));
  scenario.boundary_transfer.assign(ppsim::at(p - 1), transfer);
  return scenario;
}

/// (producer, consumer) of every edge, in the graph's order.
std::vector<std::pair<int, int>> pairs(const DependencyGraph &graph) {
  std::vector<std::pair<int, int>> result;
  for (const Dependency &edge : graph.edges)
    result.emplace_back(edge.producer, edge.consumer);
  return result;
}

/// How many edges enter each of the `entries` entries.
std::vector<std::int32_t> predecessor_count(const DependencyGraph &graph, std::size_t entries) {
  std::vector<std::int32_t> count(entries, 0);
  for (const Dependency &edge : graph.edges)
    ++count[ppsim::at(edge.consumer)];
  return count;
}

DependencyGraph build(const Scenario &scenario, const Schedule &schedule) {
  const OpLocator locator(schedule, scenario.stage_count(), 2);
  return ppsim::build_dependencies(scenario, schedule, locator);
}

} // namespace

TEST_CASE("1F1B-split on two devices: every edge, its transfer, grouped by producer") {
  const Scenario scenario = single_wave(2, Ticks{5});
  Schedule schedule;
  // Entries 0-5 on device 0, 6-11 on device 1.
  schedule.device_ops = {{make(OpKind::forward, 0, 0), make(OpKind::forward, 0, 1),
                          make(OpKind::backward_input, 0, 0), make(OpKind::backward_weight, 0, 0),
                          make(OpKind::backward_input, 0, 1), make(OpKind::backward_weight, 0, 1)},
                         {make(OpKind::forward, 1, 0), make(OpKind::backward_input, 1, 0),
                          make(OpKind::backward_weight, 1, 0), make(OpKind::forward, 1, 1),
                          make(OpKind::backward_input, 1, 1), make(OpKind::backward_weight, 1, 1)}};
  const DependencyGraph graph = build(scenario, schedule);
  // Build order is consumer order; within a producer that order is kept (7 -> 2 before 7 -> 8).
  CHECK(pairs(graph) ==
        std::vector<std::pair<int, int>>{
            {0, 6}, {1, 9}, {2, 3}, {4, 5}, {6, 7}, {7, 2}, {7, 8}, {9, 10}, {10, 4}, {10, 11}});
  CHECK(graph.successor_offset ==
        std::vector<std::int32_t>{0, 1, 2, 3, 3, 4, 4, 5, 7, 7, 8, 10, 10});
  CHECK(predecessor_count(graph, 12) ==
        std::vector<std::int32_t>{0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  for (const Dependency &edge : graph.edges) {
    CAPTURE(edge.producer);
    CAPTURE(edge.consumer);
    const bool crosses = (edge.producer < 6) != (edge.consumer < 6);
    CHECK(edge.crosses_devices == crosses);
    CHECK(edge.transfer == (crosses ? Ticks{5} : Ticks{0}));
  }
  // What each edge waits for: the loss turns F(1,j) into B(1,j); B(0,j) waits for B(1,j).
  CHECK(graph.edges[4].needed == OpRef{OpKind::forward, 1, 0});
  CHECK(graph.edges[5].needed == OpRef{OpKind::backward_input, 1, 0});
  CHECK(graph.edges[2].needed == OpRef{OpKind::backward_input, 0, 0});
}

TEST_CASE("a full backward waits for the downstream BW when there is no B") {
  const Scenario scenario = single_wave(2, Ticks{3});
  Schedule schedule;
  schedule.device_ops = {{make(OpKind::forward, 0, 0), make(OpKind::backward_full, 0, 0)},
                         {make(OpKind::forward, 1, 0), make(OpKind::backward_full, 1, 0)}};
  const DependencyGraph graph = build(scenario, schedule);
  CHECK(pairs(graph) == std::vector<std::pair<int, int>>{{0, 2}, {2, 3}, {3, 1}});
  CHECK(graph.edges[2].needed == OpRef{OpKind::backward_full, 1, 0});
  CHECK(graph.edges[2].transfer == Ticks{3});
  CHECK(graph.edges[1].transfer == Ticks{0});
}

TEST_CASE("recomputation edges: R after its F (and the backward trigger when lumped), RW and RBW "
          "after B") {
  Scenario scenario = single_wave(2, Ticks{0});
  Schedule schedule;
  schedule.device_ops = {
      {make(OpKind::forward, 0, 0), make(OpKind::recompute_forward, 0, 0),
       make(OpKind::backward_input, 0, 0), make(OpKind::recompute_weight_inputs, 0, 0),
       make(OpKind::recompute_full_backward, 0, 0), make(OpKind::backward_weight, 0, 0)},
      {make(OpKind::forward, 1, 0), make(OpKind::backward_input, 1, 0),
       make(OpKind::backward_weight, 1, 0)}};
  const DependencyGraph early = build(scenario, schedule);
  CHECK(predecessor_count(early, 9) ==
        std::vector<std::int32_t>{0, 1, 1, 1, 1, 1, 1, 1, 1});
  CHECK(early.edges[ppsim::at(early.successor_offset[0])].consumer == 1); // F(0,0) -> R(0,0)
  scenario.remat_timing = ppsim::RematTiming::lumped;
  const DependencyGraph lumped = build(scenario, schedule);
  // The lumped R also waits for the gradient B(1,0) (entry 7), like its B.
  CHECK(predecessor_count(lumped, 9) ==
        std::vector<std::int32_t>{0, 2, 1, 1, 1, 1, 1, 1, 1});
  std::vector<int> successors_of_b10;
  for (auto e = lumped.successor_offset[7]; e < lumped.successor_offset[8]; ++e) {
    successors_of_b10.push_back(lumped.edges[ppsim::at(e)].consumer);
  }
  CHECK(successors_of_b10 == std::vector<int>{1, 2, 8});
  // RW and RBW hang on B(0,0) (entry 2).
  std::vector<int> successors_of_b00;
  for (auto e = lumped.successor_offset[2]; e < lumped.successor_offset[3]; ++e) {
    successors_of_b00.push_back(lumped.edges[ppsim::at(e)].consumer);
  }
  CHECK(successors_of_b00 == std::vector<int>{3, 4, 5});
}

TEST_CASE("DualPipe: an OV entry carries both sub-ops' edges, transfers by boundary") {
  Scenario scenario;
  scenario.devices = 2;
  scenario.pipes = 2;
  scenario.stage_device = {0, 1, 1, 0}; // pipe 0: stages 0,1; pipe 1: stages 2,3
  scenario.stage_costs.resize(4);
  scenario.boundary_transfer = {Ticks{5}, Ticks{99}, Ticks{7}}; // 99: no boundary between pipes
  Schedule schedule;
  schedule.device_ops = {{make(OpKind::forward, 0, 0), make(OpKind::forward, 3, 0),
                          make(OpKind::backward_input, 3, 0), make(OpKind::backward_input, 0, 0)},
                         {make(OpKind::forward, 2, 0),
                          Op::overlap({OpKind::forward, 1, 0}, {OpKind::backward_input, 2, 0}),
                          make(OpKind::backward_input, 1, 0)}};
  const OpLocator locator(schedule, 4, 1);
  const DependencyGraph graph = ppsim::build_dependencies(scenario, schedule, locator);
  CHECK(pairs(graph) ==
        std::vector<std::pair<int, int>>{{0, 5}, {1, 2}, {2, 5}, {4, 1}, {5, 6}, {6, 3}});
  CHECK(predecessor_count(graph, 7) ==
        std::vector<std::int32_t>{0, 1, 1, 1, 0, 2, 1});
  std::vector<Ticks> transfers;
  for (const Dependency &edge : graph.edges)
    transfers.push_back(edge.transfer);
  CHECK(transfers ==
        std::vector<Ticks>{Ticks{5}, Ticks{0}, Ticks{7}, Ticks{7}, Ticks{0}, Ticks{5}});
  // Stage 3 ends pipe 1: its B waits for its own F; stage 2 starts pipe 1: its F waits for nothing.
  CHECK(graph.edges[1].needed == OpRef{OpKind::forward, 3, 0});
  CHECK(graph.edges[4].needed == OpRef{OpKind::forward, 1, 0});
}

TEST_CASE("build_dependencies names the consumer and the missing producer") {
  const Scenario scenario = single_wave(2, Ticks{0});
  Schedule missing_forward;
  missing_forward.device_ops = {{make(OpKind::forward, 0, 0), make(OpKind::backward_full, 0, 0)},
                                {make(OpKind::forward, 1, 0), make(OpKind::backward_full, 1, 0),
                                 make(OpKind::forward, 1, 1)}};
  CHECK_THROWS_WITH_AS(build(scenario, missing_forward),
                       "F(1,1) needs F(0,1), which the schedule does not contain", ppsim::Error);
  Schedule weight_without_input;
  weight_without_input.device_ops = {
      {make(OpKind::forward, 0, 0), make(OpKind::backward_weight, 0, 0)},
      {make(OpKind::forward, 1, 0)}};
  CHECK_THROWS_WITH_AS(build(scenario, weight_without_input),
                       "W(0,0) needs B(0,0), which the schedule does not contain", ppsim::Error);
  Schedule no_downstream_backward;
  no_downstream_backward.device_ops = {
      {make(OpKind::forward, 0, 0), make(OpKind::backward_input, 0, 0)},
      {make(OpKind::forward, 1, 0)}};
  // Neither B(1,0) nor BW(1,0): the message names the full form it fell back to.
  CHECK_THROWS_WITH_AS(build(scenario, no_downstream_backward),
                       "B(0,0) needs BW(1,0), which the schedule does not contain", ppsim::Error);
}
