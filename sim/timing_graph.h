#pragma once
// The ops of a validated schedule as a fixed-order timing pass reads them (docs/model.md,
// "Engine" and "Re-timing fixed orders"), shared by the engine and the re-timer: per node (an
// entry, OpLocator's numbering) its duration and device, and its input and output edges with
// their transfers and links; and the pass that times the nodes in a topological order consistent
// with the device orders, without an event queue.
#include "sim/op_locator.h"
#include "sim/scenario.h"
#include "sim/schedule.h"

#include <cstdint>
#include <span>
#include <vector>

namespace ppsim {

struct TimingGraph {
  bool contention = false; ///< scenario.link.contention
  bool blocking = false;   ///< scenario.link.blocking

  // Per node.
  std::vector<Ticks> duration;
  std::vector<std::int32_t> device;
  /// Edges are numbered consumer by consumer: node x's inputs are [input_offset[x],
  /// input_offset[x + 1]), in entry_inputs' order.
  std::vector<std::int32_t> input_offset;

  // Per edge: its producer and its channel, the (transfer time, link) it travels by. A schedule
  // has few channels (per device pair, one per boundary cost), so an edge holds 4 bytes for them
  // where a time and a link would take 12.
  std::vector<std::int32_t> producer;
  std::vector<std::int32_t> channel;
  /// Per channel: its transfer time and its link; channel kLocalChannel is on one device (no
  /// time, link -1).
  static constexpr std::int32_t kLocalChannel = 0;
  std::vector<Ticks> channel_transfer{Ticks{}};
  std::vector<std::int32_t> channel_link{-1};

  // Only in a graph built with its outputs (GraphOutputs): node x's outputs are
  // output_edges[output_offset[x] .. output_offset[x + 1]), in the engine's release order (the
  // order the consumers' inputs were built), and each edge's consumer.
  std::vector<std::int32_t> output_offset;
  std::vector<std::int32_t> output_edges;
  std::vector<std::int32_t> consumer;

  std::int32_t link_count = 0; ///< links: the ordered device pairs that carry a transfer
  std::vector<int> links_from; ///< per device: how many links leave it

  [[nodiscard]] std::int32_t node_count() const {
    return static_cast<std::int32_t>(duration.size());
  }
  [[nodiscard]] std::int32_t edge_count() const {
    return static_cast<std::int32_t>(producer.size());
  }
  [[nodiscard]] Ticks transfer(std::int32_t edge) const {
    return channel_transfer[at(channel[at(edge)])];
  }
  /// -1 on one device.
  [[nodiscard]] std::int32_t link(std::int32_t edge) const {
    return channel_link[at(channel[at(edge)])];
  }
  /// On independent links an input arrives at its producer's end plus its transfer, so a pass
  /// pulls it from the producer; contended or blocking links need the arrivals pushed in the
  /// order the producers end, along the output lists.
  [[nodiscard]] bool pulls() const { return !contention && !blocking; }
};

/// Whether a graph lists its outputs: only where a pass pushes arrivals (not TimingGraph::pulls),
/// or always, for a caller that walks from producers to consumers.
enum class GraphOutputs { where_pushed, always };

/// Builds the graph of a validated schedule from entry_inputs and op_duration; `locator` must
/// index `schedule` (checked: each device's entry count). Throws Error as entry_inputs does.
TimingGraph build_timing_graph(const Scenario &scenario, const Schedule &schedule,
                               const OpLocator &locator, GraphOutputs outputs);

/// The output lists of a graph (TimingGraph::output_offset, output_edges, consumer), for a
/// graph built without them.
struct OutputLists {
  std::vector<std::int32_t> offset;
  std::vector<std::int32_t> edges;
  std::vector<std::int32_t> consumer;
};
OutputLists output_lists(const TimingGraph &graph);

/// A topological order of every node consistent with the device orders: each device runs as far
/// as its inputs allow, and resumes when the input its next op waits for is placed. Throws the
/// engine's deadlock Error when the orders cannot all run: for each device whose list is not
/// done, its first op not placed and the first of that op's inputs that never ran.
std::vector<std::int32_t> topological_order(const TimingGraph &graph, const Scenario &scenario,
                                            const Schedule &schedule, const OpLocator &locator);

/// What a pass writes, and the device and link availability it starts from.
struct TimingState {
  std::vector<Ticks> end;         ///< per node
  std::vector<Ticks> arrival;     ///< per edge, where the pass pushes: when it reaches the consumer
  std::vector<Ticks> device_free; ///< per device
  std::vector<Ticks> link_free;   ///< per link (contention only)

  /// Sized for `graph`, every time zero.
  explicit TimingState(const TimingGraph &graph, int devices);

  /// When input edge `edge` reaches its consumer.
  [[nodiscard]] Ticks arrival_of(const TimingGraph &graph, std::int32_t edge) const {
    return graph.pulls() ? end[at(graph.producer[at(edge)])] + graph.transfer(edge)
                         : arrival[at(edge)];
  }
};

/// Times the nodes at positions [first, order.size()) of a topological order, from the device
/// and link availability in `state` (all zero for a whole pass): each starts at its device's
/// release and its inputs' arrivals, as Engine::run times it. A link serves its transfers in the
/// order their producers end, which is the order of the sender's list.
void time_in_order(const TimingGraph &graph, std::span<const std::int32_t> order,
                   std::int32_t first, TimingState &state);

/// A whole pass (`state` all zero) in the order topological_order would give, without keeping
/// it: what a single replay needs. Throws its deadlock Error.
void time_in_device_order(const TimingGraph &graph, const Scenario &scenario,
                          const Schedule &schedule, const OpLocator &locator,
                          TimingState &state);

} // namespace ppsim
