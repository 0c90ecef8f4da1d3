// Link model of docs/model.md, "Links and ties": latency, contention (one transfer at a time per
// direction, FIFO), blocking sends. Hand-computed on GPipe p=2 m=2, F=1, B=1, W=0, latency 3.
#include "test_support.h"

#include <doctest/doctest.h>

#include <limits>
#include <random>

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

// issue_29: runtimes and a two-level topology (docs/model.md, "Runtimes and topology"): the
// closed forms of GPipe on random settings, uniform F and fused backward BW.
namespace {

struct GpipeSetting {
  int p, m;
  Rational forward, backward; // F and BW (W = 0)
  std::vector<Rational> boundary; // c_b, b = 0 .. p - 2
};

RunInput gpipe_input(const GpipeSetting &s, Runtime runtime, int gpus_per_node) {
  RunInput input = uniform_input(s.p, s.m, s.forward, s.backward, {0, 1}, s.boundary[0]);
  input.runtime = runtime;
  if (gpus_per_node > 0) {
    input.gpus_per_node = gpus_per_node;
    input.inter_node_latency = s.boundary[static_cast<std::size_t>(gpus_per_node - 1)];
  }
  return input;
}

} // namespace

TEST_CASE("runtime presets: GPipe's closed forms with free links, blocking sends, contention") {
  std::mt19937 random(29);
  const auto pick = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(random);
  };
  for (int trial = 0; trial < 40; ++trial) {
    GpipeSetting s{pick(2, 6), pick(1, 12), {pick(1, 8), 4}, {pick(4, 16), 3}, {}};
    // Two nodes of n devices where n < p: boundary n - 1 is the inter-node one.
    const int gpus_per_node = trial % 2 == 0 ? 0 : pick(1, s.p - 1);
    const Rational intra{pick(0, 6), 5};
    const Rational inter = gpus_per_node > 0 ? Rational{pick(1, 20), 5} : intra;
    for (int b = 0; b + 1 < s.p; ++b)
      s.boundary.push_back((b + 1) % (gpus_per_node > 0 ? gpus_per_node : s.p + 1) == 0 ? inter
                                                                                       : intra);
    CAPTURE(s.p);
    CAPTURE(s.m);
    CAPTURE(gpus_per_node);
    const double f = to_double(s.forward), bw = to_double(s.backward);
    double sum = 0, largest = 0;
    for (const Rational &c : s.boundary) {
      sum += to_double(c);
      largest = std::max(largest, to_double(c));
    }
    const double free_links = (s.m + s.p - 1) * (f + bw) + 2 * sum;
    const auto makespan = [&](Runtime runtime) {
      const auto run = run_schedule("gpipe", gpipe_input(s, runtime, gpus_per_node));
      return run.units(run.simulation.metrics.makespan);
    };
    CHECK(makespan(Runtime::ideal) == doctest::Approx(free_links));
    CHECK(makespan(Runtime::megatron) == doctest::Approx(free_links + 2 * (s.m - 1) * largest));
    // Contention's form holds for one uniform latency c with c <= BW (the gradients never
    // queue); with c <= F nothing queues.
    const double c = to_double(intra);
    if (gpus_per_node == 0 && c <= bw)
      CHECK(makespan(Runtime::torch) ==
            doctest::Approx(free_links + (s.m - 1) * std::max(0.0, c - f)));
  }
}

TEST_CASE("runtime presets set the link model; a link field beside one is refused") {
  RunInput input = uniform_input(2, 2, {1, 1}, {1, 1}, {0, 1}, {3, 1});
  const std::pair<Runtime, LinkModel> presets[] = {{Runtime::ideal, {false, false}},
                                                   {Runtime::torch, {true, false}},
                                                   {Runtime::megatron, {true, true}}};
  for (const auto &[runtime, link] : presets) {
    input.runtime = runtime;
    const Scenario scenario = testing::scenario_for("gpipe", input);
    CHECK(scenario.link.contention == link.contention);
    CHECK(scenario.link.blocking == link.blocking);
  }
  // On the link oracles above megatron ends at the blocking sends' 18.
  const auto megatron = run_schedule("gpipe", input);
  CHECK(megatron.units(megatron.simulation.metrics.makespan) == 18);
  input.origins["cluster.link.blocking"] = {"run.toml", 7, "cluster.link.blocking"};
  CHECK_THROWS_WITH(testing::scenario_for("gpipe", input),
                    "run.toml:7: field 'cluster.link.blocking': is set by cluster.runtime; give "
                    "one of them");
}

TEST_CASE("the inter-node link: its bandwidth on the boundaries between nodes, refusals") {
  // p = 4, two devices per node: boundary 1 crosses nodes. 1 MB over 1 GB/s inside a node
  // (1 ms) and over 0.25 GB/s between nodes (4 ms), latencies 0.5 and 1: transfers 1.5, 5, 1.5,
  // so GPipe p = 4 m = 1 F = BW = 1 ends at (m + p - 1)(F + BW) + 2 * 8 = 24.
  RunInput input = uniform_input(4, 1, {1, 1}, {1, 1}, {0, 1}, {1, 2});
  input.bytes.output = {1e6};
  input.bandwidth_bytes_per_second = 1e9;
  input.gpus_per_node = 2;
  input.inter_node_latency = {1, 1};
  input.inter_node_bandwidth_bytes_per_second = 0.25e9;
  const auto run = run_schedule("gpipe", input);
  CHECK(run.units(run.simulation.metrics.makespan) == 24);

  RunInput refused = input;
  refused.gpus_per_node = 0;
  CHECK_THROWS_WITH(testing::scenario_for("gpipe", refused),
                    "field 'cluster.inter_node_link.latency': has no effect without "
                    "cluster.gpus_per_node: every device is on one node");
  refused = input;
  refused.inter_node_latency = {0, 1};
  refused.inter_node_bandwidth_bytes_per_second = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(testing::scenario_for("gpipe", refused),
                    "field 'cluster.gpus_per_node': has no effect without "
                    "cluster.inter_node_link (its latency or bandwidth): the nodes would be "
                    "joined by cluster.link");
  refused = input;
  refused.bytes.output.clear();
  CHECK_THROWS_WITH(testing::scenario_for("gpipe", refused),
                    "field 'cluster.link.bandwidth': a transfer's time needs the outputs' bytes: "
                    "give a cost file with output_bytes or model.memory.out_bytes");
  refused.bandwidth_bytes_per_second = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(testing::scenario_for("gpipe", refused),
                    "field 'cluster.inter_node_link.bandwidth': a transfer's time needs the "
                    "outputs' bytes: give a cost file with output_bytes or "
                    "model.memory.out_bytes");
  refused = input;
  refused.gpus_per_node = 4;
  CHECK_THROWS_WITH(testing::scenario_for("gpipe", refused),
                    "field 'cluster.gpus_per_node': has no effect: the 4 devices fit on one node "
                    "of 4, so no boundary takes cluster.inter_node_link");
  refused.gpus_per_node = 1;
  refused.origins["cluster.link.latency"] = {"", 0, "--comm"};
  CHECK_THROWS_WITH(testing::scenario_for("gpipe", refused),
                    "field '--comm': has no effect with cluster.gpus_per_node = 1: every boundary "
                    "joins two nodes, over cluster.inter_node_link");
  refused = input;
  refused.inter_node_latency = {-1, 1};
  CHECK_THROWS_WITH(testing::scenario_for("gpipe", refused),
                    "field 'cluster.inter_node_link.latency': expected a non-negative duration");
}

TEST_CASE("issue_29 the runtime's overhead per action: F, B, W and BW pay it once, R does not") {
  // GPipe p = 4 m = 8, F = 1, BW = 3, c = 1/2, o = 1/4: (m + p - 1)(F + BW + 2o) + 2(p - 1)c.
  RunInput input = uniform_input(4, 8, {1, 1}, {3, 1}, {0, 1}, {1, 2});
  input.op_overhead = {1, 4};
  const auto gpipe = run_schedule("gpipe", input);
  CHECK(gpipe.units(gpipe.simulation.metrics.makespan) == 11 * 4.5 + 3);
  // A split backward is two actions: device 0 of 1F1B-split with W = 1 is busy m(F + B + W + 3o).
  input.backward_weight = {{1, 1}};
  const auto split = run_schedule("1f1b-split", input);
  CHECK(split.units(split.simulation.metrics.devices[0].busy) == 8 * (1 + 3 + 1 + 0.75));
  const auto fused = run_schedule("1f1b", input);
  CHECK(fused.units(fused.simulation.metrics.devices[0].busy) == 8 * (1 + 4 + 0.5));
  // Recomputation runs inside the backward's call: full-remat's R add R, not R + o.
  const auto remat = run_schedule("full-remat", input);
  CHECK(remat.units(remat.simulation.metrics.devices[0].busy) == 8 * (1 + 4 + 0.5) + 8 * 1);
  input.op_overhead = {-1, 4};
  CHECK_THROWS_WITH(testing::scenario_for("gpipe", input),
                    "field 'cluster.op_overhead': expected a non-negative duration");
}
