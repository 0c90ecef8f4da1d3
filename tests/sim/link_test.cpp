// Link model of docs/model.md, "Links and ties": latency, contention (one transfer at a time per
// direction, FIFO), blocking sends. Hand-computed on GPipe p=2 m=2, F=1, B=1, W=0, latency 3.
#include "test_support.h"

#include <doctest/doctest.h>

using namespace ppsim;
using ppsim::testing::run_schedule;
using ppsim::testing::uniform_input;

TEST_CASE("transfers longer than ops: free links overlap them") {
  // (m+p-1)(F+B+W) + 2(p-1)c = 6 + 6 = 12.
  const auto run = run_schedule("gpipe", uniform_input(2, 2, {1, 1}, {1, 1}, {0, 1}, {3, 1}));
  CHECK(run.units(run.simulation.metrics.makespan) == 12);
  CHECK(run.simulation.timing.transfers.size() == 4);
}

TEST_CASE("contention queues the second transfer behind the first") {
  // F(0,1)'s message waits for F(0,0)'s ([1,4]) and travels [4,7]; the two gradients travel
  // [9,12] and [12,15], so device 0 ends BW(0,1) at 16.
  ScenarioInput input = uniform_input(2, 2, {1, 1}, {1, 1}, {0, 1}, {3, 1});
  input.contention = true;
  const auto run = run_schedule("gpipe", input);
  CHECK(run.units(run.simulation.metrics.makespan) == 16);
  std::vector<std::pair<double, double>> windows;
  for (const Transfer &transfer : run.simulation.timing.transfers) {
    windows.emplace_back(run.units(transfer.start), run.units(transfer.end));
  }
  CHECK(windows == std::vector<std::pair<double, double>>{{1, 4}, {4, 7}, {9, 12}, {12, 15}});
}

TEST_CASE("blocking sends occupy the sender for the transfer") {
  // Device 0: F [0,1] send [1,4], F [4,5] send [5,8]; device 1: F [4,5], F [8,9], BW [9,10]
  // send [10,13], BW [13,14] send [14,17]; device 0: BW [13,14], BW [17,18].
  ScenarioInput input = uniform_input(2, 2, {1, 1}, {1, 1}, {0, 1}, {3, 1});
  input.blocking = true;
  const auto run = run_schedule("gpipe", input);
  CHECK(run.units(run.simulation.metrics.makespan) == 18);
  // Busy time counts compute only, not the blocking sends.
  CHECK(run.units(run.simulation.metrics.devices[0].busy) == 4);
}

TEST_CASE("bandwidth adds bytes / bandwidth to the latency") {
  // 1 MB over 1 GB/s = 1 ms, plus 0.5 ms latency: GPipe p=2 m=1 F=B=1 -> (m+p-1)(F+B) + 2 * 1.5
  // = 7.
  ScenarioInput input = uniform_input(2, 1, {1, 1}, {1, 1}, {0, 1}, {1, 2});
  input.bytes.output = {1e6};
  input.bandwidth_bytes_per_second = 1e9;
  const auto run = run_schedule("gpipe", input);
  CHECK(run.units(run.simulation.metrics.makespan) == 7);
}
