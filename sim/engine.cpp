#include "sim/engine.h"

#include "base/index.h"

#include <algorithm>
#include <span>

namespace ppsim {

Engine::Engine(const Scenario &scenario, const Schedule &schedule)
    : Engine(scenario, schedule,
             std::make_shared<const OpLocator>(schedule, scenario.stage_count(),
                                               scenario.microbatches)) {}

Engine::Engine(const Scenario &scenario, const Schedule &schedule,
               std::shared_ptr<const OpLocator> locator)
    : scenario_(scenario), schedule_(schedule), locator_(std::move(locator)),
      graph_(build_timing_graph(scenario, schedule, *locator_, GraphOutputs::where_pushed)) {}

Timing Engine::run(bool with_transfers) const {
  TimingState state(graph_, schedule_.device_count());
  time_in_device_order(graph_, scenario_, schedule_, *locator_, state);

  Timing result;
  if (with_transfers) {
    // Grouped by sender in its list's order, each producer's in its outputs' release order: the
    // graph's output lists where the pass pushed along them, else made here.
    const bool listed = !graph_.output_offset.empty();
    const OutputLists made = listed ? OutputLists{} : output_lists(graph_);
    const std::span<const std::int32_t> outputs = listed ? graph_.output_edges : made.edges;
    const std::span<const std::int32_t> consumer = listed ? graph_.consumer : made.consumer;
    const auto sent = [](std::int32_t channel) { return channel != TimingGraph::kLocalChannel; };
    result.transfers.reserve(at(std::count_if(graph_.channel.begin(), graph_.channel.end(), sent)));
    for (const std::int32_t edge : outputs) {
      if (graph_.link(edge) < 0)
        continue;
      const std::int32_t from = graph_.producer[at(edge)];
      const std::int32_t to = consumer[at(edge)];
      const Ticks arrival = state.arrival_of(graph_, edge);
      result.transfers.push_back(Transfer{from, to, graph_.device[at(from)], graph_.device[at(to)],
                                          arrival - graph_.transfer(edge), arrival});
    }
  }
  const auto nodes = at(graph_.node_count());
  result.start.resize(nodes);
  for (std::size_t x = 0; x < nodes; ++x)
    result.start[x] = state.end[x] - graph_.duration[x];
  result.end = std::move(state.end);
  return result;
}

} // namespace ppsim
