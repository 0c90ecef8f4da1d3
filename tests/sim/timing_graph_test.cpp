// The timing graph shared by the engine and the re-timer (docs/model.md, "Engine"): which edge
// lists it keeps, and its topological order, on random valid orders.
#include "random_orders.h"

#include "sim/op_locator.h"
#include "sim/timing_graph.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

using namespace ppsim;
using ppsim::testing::random_case;
using ppsim::testing::RandomCase;

TEST_CASE("a pass pulls its inputs on independent links and pushes them on contended or "
          "blocking ones") {
  std::mt19937 random(20261207);
  for (int trial = 0; trial < 60; ++trial) {
    CAPTURE(trial);
    const bool contention = trial % 3 == 1;
    const bool blocking = trial % 3 == 2;
    const RandomCase c = random_case(random, contention, blocking);
    const OpLocator locator(c.schedule, c.scenario.stage_count(), c.scenario.microbatches);
    const TimingGraph pushed =
        build_timing_graph(c.scenario, c.schedule, locator, GraphOutputs::where_pushed);
    const bool pulls = !contention && !blocking;
    CHECK(pushed.pulls() == pulls);
    // Pulled: no output lists and no time per edge, the memory a single replay does not need.
    CHECK(pushed.output_edges.empty() == pulls);
    CHECK(pushed.consumer.empty() == pulls);
    CHECK(TimingState(pushed, c.scenario.devices).arrival.empty() == pulls);

    // Built with its outputs (as the re-timer does), each edge is listed once, under its
    // producer, in the order the consumers' inputs were built, with the consumer that lists it.
    const TimingGraph full =
        build_timing_graph(c.scenario, c.schedule, locator, GraphOutputs::always);
    REQUIRE(full.output_offset.size() == static_cast<std::size_t>(full.node_count()) + 1);
    std::vector<std::int32_t> consumers; // edges are numbered consumer by consumer
    for (std::int32_t x = 0; x < full.node_count(); ++x)
      consumers.insert(consumers.end(), at(full.input_offset[at(x) + 1] - full.input_offset[at(x)]),
                       x);
    CHECK(full.consumer == consumers);
    // The lists an engine makes for a graph built without them are the same.
    const OutputLists made = output_lists(pushed);
    CHECK(made.offset == full.output_offset);
    CHECK(made.edges == full.output_edges);
    CHECK(made.consumer == full.consumer);
    std::vector<int> listed(static_cast<std::size_t>(full.edge_count()), 0);
    for (std::int32_t x = 0; x < full.node_count(); ++x) {
      for (std::int32_t k = full.output_offset[at(x)]; k < full.output_offset[at(x) + 1]; ++k) {
        const std::int32_t edge = full.output_edges[at(k)];
        ++listed[at(edge)];
        CHECK(full.producer[at(edge)] == x);
        CHECK((k == full.output_offset[at(x)] || full.output_edges[at(k) - 1] < edge));
        CHECK(full.input_offset[at(full.consumer[at(edge)])] <= edge);
        CHECK(edge < full.input_offset[at(full.consumer[at(edge)]) + 1]);
      }
    }
    CHECK(std::count(listed.begin(), listed.end(), 1) == full.edge_count());
  }
}

TEST_CASE("the topological order has every op once, after its inputs and its device "
          "predecessor") {
  std::mt19937 random(33);
  for (int trial = 0; trial < 100; ++trial) {
    CAPTURE(trial);
    const RandomCase c = random_case(random, trial % 2 == 0);
    const OpLocator locator(c.schedule, c.scenario.stage_count(), c.scenario.microbatches);
    const TimingGraph graph =
        build_timing_graph(c.scenario, c.schedule, locator, GraphOutputs::where_pushed);
    const std::vector<std::int32_t> order =
        topological_order(graph, c.scenario, c.schedule, locator);
    REQUIRE(order.size() == static_cast<std::size_t>(graph.node_count()));
    std::vector<std::int32_t> rank(order.size(), -1);
    for (std::size_t q = 0; q < order.size(); ++q) {
      REQUIRE(rank[at(order[q])] == -1);
      rank[at(order[q])] = static_cast<std::int32_t>(q);
    }
    for (std::int32_t x = 0; x < graph.node_count(); ++x) {
      for (std::int32_t e = graph.input_offset[at(x)]; e < graph.input_offset[at(x) + 1]; ++e)
        CHECK(rank[at(graph.producer[at(e)])] < rank[at(x)]);
      // Nodes are numbered device by device in list order.
      if (x > 0 && graph.device[at(x - 1)] == graph.device[at(x)])
        CHECK(rank[at(x - 1)] < rank[at(x)]);
    }
  }
}
