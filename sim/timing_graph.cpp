#include "sim/timing_graph.h"

#include "base/assert.h"
#include "base/error.h"
#include "base/index.h"
#include "sim/dependencies.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <string>

namespace ppsim {
namespace {

// The engine's deadlock Error: for each device whose list is not done (`next`, its first node
// not placed), that op and the first of its inputs that never ran (the one of the lowest
// producer entry, as the engine's successor lists meet them).
[[noreturn]] void throw_deadlock(const TimingGraph &graph, const Scenario &scenario,
                                 const Schedule &schedule, const OpLocator &locator,
                                 const std::vector<std::int32_t> &next) {
  // Devices run their lists in order, so the nodes placed are a prefix of each list.
  const auto placed = [&](std::int32_t node) { return node < next[at(graph.device[at(node)])]; };
  std::vector<std::string> waits;
  EntryInputs inputs;
  for (int g = 0; g < schedule.device_count(); ++g) {
    const std::int32_t entry = next[at(g)];
    if (entry >= locator.entry_offset(g + 1))
      continue;
    const Op &op = schedule.device_ops[at(g)][at(entry - locator.entry_offset(g))];
    const int count = entry_inputs(scenario, locator, op, inputs);
    const OpInput *waited = nullptr;
    for (int k = 0; k < count; ++k) {
      const OpInput &input = inputs[at(k)];
      if (!placed(input.producer) && (!waited || input.producer < waited->producer))
        waited = &input;
    }
    waits.push_back(fmt::format("device {} waits at {} for {}", g, describe(op),
                                waited ? describe(waited->needed) : "?"));
  }
  throw Error(fmt::format("schedule '{}' deadlocks: {}", schedule.name, fmt::join(waits, "; ")));
}

} // namespace

TimingGraph build_timing_graph(const Scenario &scenario, const Schedule &schedule,
                               const OpLocator &locator, GraphOutputs outputs) {
  // An index of another schedule (one a policy replaced) would time the wrong ops.
  PPSIM_ASSERT(locator.entry_offset(0) == 0);
  for (int g = 0; g < schedule.device_count(); ++g) {
    PPSIM_ASSERT(at(locator.entry_offset(g + 1) - locator.entry_offset(g)) ==
                 schedule.device_ops[at(g)].size());
  }
  TimingGraph graph;
  graph.contention = scenario.link.contention;
  graph.blocking = scenario.link.blocking;
  const int devices = schedule.device_count();
  const auto nodes = at(locator.entry_count());
  graph.duration.reserve(nodes);
  graph.device.reserve(nodes);
  graph.input_offset.reserve(nodes + 1);
  graph.input_offset.push_back(0);
  // Most entries have one input (an F, a B, a W), the first stage's F none: about one per node.
  graph.producer.reserve(nodes);
  graph.channel.reserve(nodes);
  // Per sender, its channels so far as (receiver, channel): a few each (the devices its stages
  // feed, by boundary cost), where a table of every device pair would grow as p^2. A new
  // receiver is a new link.
  std::vector<std::vector<std::pair<int, std::int32_t>>> channels_of(at(devices));
  graph.links_from.assign(at(devices), 0);
  EntryInputs inputs;
  for (int g = 0; g < devices; ++g) {
    for (const Op &op : schedule.device_ops[at(g)]) {
      graph.duration.push_back(op_duration(scenario, op));
      graph.device.push_back(g);
      const int count = entry_inputs(scenario, locator, op, inputs);
      for (int k = 0; k < count; ++k) {
        const OpInput &input = inputs[at(k)];
        std::int32_t channel = TimingGraph::kLocalChannel;
        if (input.crosses_devices) {
          auto &sent = channels_of[at(locator.device_of(input.producer))];
          const auto to_g = [&](const auto &pair) { return pair.first == g; };
          const auto known = std::find_if(sent.begin(), sent.end(), [&](const auto &pair) {
            return to_g(pair) && graph.channel_transfer[at(pair.second)] == input.transfer;
          });
          if (known != sent.end()) {
            channel = known->second;
          } else {
            const auto link_to_g = std::find_if(sent.begin(), sent.end(), to_g);
            std::int32_t link = graph.link_count;
            if (link_to_g != sent.end()) {
              link = graph.channel_link[at(link_to_g->second)];
            } else {
              ++graph.link_count;
              ++graph.links_from[at(locator.device_of(input.producer))];
            }
            channel = static_cast<std::int32_t>(graph.channel_link.size());
            graph.channel_transfer.push_back(input.transfer);
            graph.channel_link.push_back(link);
            sent.emplace_back(g, channel);
          }
        }
        graph.producer.push_back(input.producer);
        graph.channel.push_back(channel);
      }
      graph.input_offset.push_back(static_cast<std::int32_t>(graph.producer.size()));
    }
  }

  if (outputs == GraphOutputs::always || !graph.pulls()) {
    OutputLists lists = output_lists(graph);
    graph.output_offset = std::move(lists.offset);
    graph.output_edges = std::move(lists.edges);
    graph.consumer = std::move(lists.consumer);
  }
  return graph;
}

OutputLists output_lists(const TimingGraph &graph) {
  // Each producer's outputs in build order, the order in which the engine releases them.
  ProducerGroups groups = group_by_producer(graph.producer, graph.node_count());
  OutputLists lists{std::move(groups.offset), std::move(groups.ids),
                    std::vector<std::int32_t>(at(graph.edge_count()))};
  for (std::int32_t x = 0; x < graph.node_count(); ++x)
    std::fill(lists.consumer.begin() + graph.input_offset[at(x)],
              lists.consumer.begin() + graph.input_offset[at(x) + 1], x);
  return lists;
}

namespace {

// Calls place(node) for every node in a topological order consistent with the device orders:
// each device runs as far as its inputs allow, and resumes when the input its next op waits for
// is placed. Throws the deadlock Error when the orders cannot all run.
template <class Place>
void place_in_device_order(const TimingGraph &graph, const Scenario &scenario,
                           const Schedule &schedule, const OpLocator &locator, Place &&place) {
  const int devices = schedule.device_count();
  std::vector<std::int32_t> next(at(devices)); // per device: its first node not placed
  for (int g = 0; g < devices; ++g)
    next[at(g)] = locator.entry_offset(g);
  // Devices run their lists in order, so a node is placed when it precedes its device's next.
  const auto is_placed = [&](std::int32_t node) {
    return node < next[at(graph.device[at(node)])];
  };
  // A device stops at the first op with an input not placed and waits on that input's device,
  // which wakes it when it places that input: no per-node counters and no output lists.
  std::vector<std::int32_t> waits_for(at(devices));
  std::vector<std::vector<int>> waiting_on(at(devices));
  std::vector<int> runnable;
  for (int g = devices; g-- > 0;)
    runnable.push_back(g);
  std::int32_t placed = 0;
  while (!runnable.empty()) {
    const int g = runnable.back();
    runnable.pop_back();
    for (const std::int32_t last = locator.entry_offset(g + 1); next[at(g)] < last;) {
      const std::int32_t node = next[at(g)];
      std::int32_t missing = -1;
      for (std::int32_t e = graph.input_offset[at(node)]; e < graph.input_offset[at(node) + 1];
           ++e) {
        if (!is_placed(graph.producer[at(e)])) {
          missing = graph.producer[at(e)];
          break;
        }
      }
      if (missing >= 0) {
        waits_for[at(g)] = missing;
        waiting_on[at(graph.device[at(missing)])].push_back(g);
        break;
      }
      place(node);
      ++placed;
      ++next[at(g)];
      auto &waiters = waiting_on[at(g)];
      for (std::size_t k = 0; k < waiters.size();) {
        if (waits_for[at(waiters[k])] == node) {
          runnable.push_back(waiters[k]);
          waiters[k] = waiters.back();
          waiters.pop_back();
        } else {
          ++k;
        }
      }
    }
  }
  if (placed != graph.node_count())
    throw_deadlock(graph, scenario, schedule, locator, next);
}

// One pass over the graph: the arrays it reads and writes, held as spans so the loop loads them
// once (writes through a TimingState& would otherwise reload every vector per node).
class Pass {
public:
  Pass(const TimingGraph &graph, TimingState &state)
      : contention_(graph.contention), blocking_(graph.blocking),
        duration_(graph.duration), device_(graph.device), input_offset_(graph.input_offset),
        producer_(graph.producer),
        output_offset_(graph.output_offset), output_edges_(graph.output_edges),
        channel_(graph.channel), channel_transfer_(graph.channel_transfer),
        channel_link_(graph.channel_link), end_(state.end), arrival_(state.arrival),
        device_free_(state.device_free), link_free_(state.link_free) {}

  // Times `node`, whose inputs and device predecessor are timed, as Engine::run times it.
  // Inlined into both loops (GCC does not on its own: a call per op costs a fifth of a pass).
  // `Pulls` is the graph's pulls(), a template argument so that each loop is compiled for one
  // mode (a test per input costs the pushing pass a tenth).
  template <bool Pulls> [[gnu::always_inline]] void time(std::int32_t node) const {
    const auto x = at(node);
    const auto device = at(device_[x]);
    Ticks start = device_free_[device];
    for (std::int32_t e = input_offset_[x]; e < input_offset_[x + 1]; ++e) {
      start = std::max(start, Pulls ? end_[at(producer_[at(e)])] +
                                          channel_transfer_[at(channel_[at(e)])]
                                    : arrival_[at(e)]);
    }
    const Ticks end = start + duration_[x];
    end_[x] = end;
    if constexpr (Pulls) {
      device_free_[device] = end;
      return;
    }
    Ticks release = end;
    for (std::int32_t k = output_offset_[x]; k < output_offset_[x + 1]; ++k) {
      const auto edge = at(output_edges_[at(k)]);
      Ticks arrival = end;
      const auto channel = at(channel_[edge]);
      const std::int32_t link = channel_link_[channel];
      if (link >= 0) {
        // A link serves its transfers in the order their producers end, which is the order of
        // the sender's list (docs/model.md, "Re-timing fixed orders").
        if (contention_)
          arrival = std::max(arrival, link_free_[at(link)]);
        arrival += channel_transfer_[channel];
        if (contention_)
          link_free_[at(link)] = arrival;
        if (blocking_)
          release = std::max(release, arrival);
      }
      arrival_[edge] = arrival;
    }
    device_free_[device] = release;
  }

private:
  bool contention_;
  bool blocking_;
  std::span<const Ticks> duration_;
  std::span<const std::int32_t> device_, input_offset_, producer_, output_offset_, output_edges_;
  std::span<const std::int32_t> channel_;
  std::span<const Ticks> channel_transfer_;
  std::span<const std::int32_t> channel_link_;
  std::span<Ticks> end_, arrival_, device_free_, link_free_;
};

} // namespace

std::vector<std::int32_t> topological_order(const TimingGraph &graph, const Scenario &scenario,
                                            const Schedule &schedule, const OpLocator &locator) {
  std::vector<std::int32_t> order;
  order.reserve(at(graph.node_count()));
  place_in_device_order(graph, scenario, schedule, locator,
                        [&](std::int32_t node) { order.push_back(node); });
  return order;
}

void time_in_device_order(const TimingGraph &graph, const Scenario &scenario,
                          const Schedule &schedule, const OpLocator &locator,
                          TimingState &state) {
  const Pass pass(graph, state);
  if (graph.pulls()) {
    place_in_device_order(graph, scenario, schedule, locator,
                          [&](std::int32_t node) { pass.time<true>(node); });
  } else {
    place_in_device_order(graph, scenario, schedule, locator,
                          [&](std::int32_t node) { pass.time<false>(node); });
  }
}

TimingState::TimingState(const TimingGraph &graph, int devices)
    : end(at(graph.node_count())), arrival(graph.pulls() ? 0 : at(graph.edge_count())),
      device_free(at(devices)),
      link_free(graph.contention ? at(graph.link_count) : 0) {}

void time_in_order(const TimingGraph &graph, std::span<const std::int32_t> order,
                   std::int32_t first, TimingState &state) {
  const Pass pass(graph, state);
  if (graph.pulls()) {
    for (std::size_t q = at(first); q < order.size(); ++q)
      pass.time<true>(order[q]);
  } else {
    for (std::size_t q = at(first); q < order.size(); ++q)
      pass.time<false>(order[q]);
  }
}

} // namespace ppsim
