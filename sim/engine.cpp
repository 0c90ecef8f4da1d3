#include "sim/engine.h"

#include "base/index.h"

namespace ppsim {

Engine::Engine(const Scenario &scenario, const Schedule &schedule)
    : Engine(scenario, schedule,
             std::make_shared<const OpLocator>(schedule, scenario.stage_count(),
                                               scenario.microbatches)) {}

Engine::Engine(const Scenario &scenario, const Schedule &schedule,
               std::shared_ptr<const OpLocator> locator)
    : scenario_(scenario), schedule_(schedule), locator_(std::move(locator)),
      graph_(build_timing_graph(scenario, schedule, *locator_)) {}

Timing Engine::run(bool with_transfers) const {
  TimingState state(graph_, schedule_.device_count());
  time_in_device_order(graph_, scenario_, schedule_, *locator_, state);

  Timing result;
  const auto nodes = at(graph_.node_count());
  result.start.resize(nodes);
  for (std::size_t x = 0; x < nodes; ++x)
    result.start[x] = state.end[x] - graph_.duration[x];
  result.end = std::move(state.end);
  if (!with_transfers)
    return result;
  std::size_t transfers = 0;
  for (const std::int32_t link : graph_.link)
    transfers += link >= 0 ? 1 : 0;
  result.transfers.reserve(transfers);
  for (std::size_t x = 0; x < nodes; ++x) {
    for (std::int32_t k = graph_.output_offset[x]; k < graph_.output_offset[x + 1]; ++k) {
      const auto edge = at(graph_.output_edges[at(k)]);
      if (graph_.link[edge] < 0)
        continue;
      const std::int32_t consumer = graph_.consumer[edge];
      const Ticks arrival = state.arrival[edge];
      result.transfers.push_back(Transfer{static_cast<std::int32_t>(x), consumer,
                                          graph_.device[x], graph_.device[at(consumer)],
                                          arrival - graph_.transfer[edge], arrival});
    }
  }
  return result;
}

} // namespace ppsim
