#include "sim/critical_path.h"
#include "base/index.h"

#include "sim/dependencies.h"
#include "sim/op_locator.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/dag_shortest_paths.hpp>
#include <fmt/format.h>
#include <functional>
#include <limits>
#include <map>

namespace ppsim {
namespace {

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property,
                                    boost::property<boost::edge_weight_t, std::int64_t>>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;

std::string input_kind(const OpRef &needed, const OpRef &consumer) {
  if (needed.kind == OpKind::forward && consumer.kind == OpKind::forward)
    return "forward";
  if (needed.kind == OpKind::forward)
    return "loss turn";
  return "gradient";
}

} // namespace

BubbleExplanation explain_bubbles(const Scenario &scenario, const Schedule &schedule,
                                  const Timing &result) {
  const OpLocator locator(schedule, scenario.stage_count(), scenario.microbatches);
  const DependencyGraph dependencies = build_dependencies(scenario, schedule, locator);
  const auto entries = at(locator.entry_count());
  const auto duration = [&](std::size_t e) { return (result.end[e] - result.start[e]).count(); };

  // Vertices: one per entry, then a source (before everything) and a sink (after everything).
  // Edge u -> v weighs the time from u's start to the earliest start of v it imposes.
  const Vertex source = entries;
  const Vertex sink = entries + 1;
  Graph graph(entries + 2);
  for (const Dependency &edge : dependencies.edges) {
    boost::add_edge(static_cast<Vertex>(edge.producer), static_cast<Vertex>(edge.consumer),
                    duration(at(edge.producer)) + edge.transfer.count(), graph);
  }
  for (int g = 0; g < schedule.device_count(); ++g) {
    for (std::int32_t e = locator.entry_offset(g); e + 1 < locator.entry_offset(g + 1); ++e) {
      boost::add_edge(static_cast<Vertex>(e), static_cast<Vertex>(e + 1), duration(at(e)), graph);
    }
  }
  for (std::size_t e = 0; e < entries; ++e) {
    boost::add_edge(source, e, std::int64_t{0}, graph);
    boost::add_edge(e, sink, duration(e), graph);
  }

  // Longest path = shortest path under reversed comparison (the DAG has no cycles: the engine
  // finished every op).
  std::vector<std::int64_t> distance(entries + 2);
  std::vector<Vertex> predecessor(entries + 2);
  boost::dag_shortest_paths(graph, source,
                            boost::distance_map(distance.data())
                                .predecessor_map(predecessor.data())
                                .distance_compare(std::greater<>())
                                .distance_combine(std::plus<>())
                                .distance_inf(std::numeric_limits<std::int64_t>::min())
                                .distance_zero(std::int64_t{0}));

  BubbleExplanation explanation;
  explanation.longest_path = Ticks{distance[sink]};
  // Walk back from the sink along predecessors.
  for (Vertex v = predecessor[sink]; v != source && v != predecessor[v]; v = predecessor[v]) {
    CriticalStep step;
    step.entry = static_cast<std::int32_t>(v);
    step.device = locator.device_of(step.entry);
    step.start = result.start[v];
    step.end = result.end[v];
    explanation.path.push_back(step);
  }
  std::reverse(explanation.path.begin(), explanation.path.end());
  for (std::size_t i = 1; i < explanation.path.size(); ++i) {
    CriticalStep &step = explanation.path[i];
    const CriticalStep &before = explanation.path[i - 1];
    for (std::int32_t k = dependencies.successor_offset[at(before.entry)];
         k < dependencies.successor_offset[at(before.entry) + 1]; ++k) {
      const Dependency &edge = dependencies.edges[at(k)];
      if (edge.consumer == step.entry && before.end + edge.transfer == step.start) {
        step.via_dependency = edge.crosses_devices || before.device != step.device;
        step.transfer = edge.transfer;
      }
    }
  }

  // Idle gaps: each is charged to the input that arrived last before the op could start.
  std::map<std::pair<int, std::string>, IdleCause> causes;
  std::vector<Ticks> arrival(entries, Ticks{});
  std::vector<std::string> last_input(entries, "start");
  explanation.waited_for.assign(entries, BubbleExplanation::kNoWait);
  for (const Dependency &edge : dependencies.edges) {
    const auto consumer = at(edge.consumer);
    const Ticks arrives = result.end[at(edge.producer)] + edge.transfer;
    if (arrives >= arrival[consumer]) {
      arrival[consumer] = arrives;
      explanation.waited_for[consumer] = edge.producer;
      const OpRef consumer_op =
          schedule
              .device_ops[at(locator.device_of(edge.consumer))]
                         [consumer - at(locator.entry_offset(locator.device_of(edge.consumer)))]
              .first;
      last_input[consumer] = fmt::format("{} from device {}", input_kind(edge.needed, consumer_op),
                                         locator.device_of(edge.producer));
    }
  }
  for (int g = 0; g < schedule.device_count(); ++g) {
    for (std::int32_t e = locator.entry_offset(g) + 1; e < locator.entry_offset(g + 1); ++e) {
      const auto entry = at(e);
      // An input that arrives with the device's previous op's end is what the op waited for.
      if (explanation.waited_for[entry] == BubbleExplanation::kNoWait ||
          arrival[entry] < result.end[entry - 1]) {
        explanation.waited_for[entry] = e - 1;
      }
      const Ticks gap = result.start[entry] - result.end[entry - 1];
      if (gap.count() <= 0)
        continue;
      IdleCause &cause = causes[{g, last_input[entry]}];
      cause.device = g;
      cause.waiting_for = last_input[entry];
      cause.idle += gap;
      ++cause.gaps;
    }
  }
  for (const auto &entry : causes)
    explanation.idle_causes.push_back(entry.second);
  std::stable_sort(explanation.idle_causes.begin(), explanation.idle_causes.end(),
                   [](const IdleCause &a, const IdleCause &b) {
                     return a.device != b.device ? a.device < b.device : a.idle > b.idle;
                   });
  return explanation;
}

std::string explanation_text(const Scenario &scenario, const Schedule &schedule,
                             const BubbleExplanation &explanation) {
  const TimeScale &scale = scenario.time_scale;
  const OpLocator locator(schedule, scenario.stage_count(), scenario.microbatches);
  const auto op_of = [&](const CriticalStep &step) {
    return describe(
        schedule.device_ops[at(step.device)][at(step.entry - locator.entry_offset(step.device))]);
  };
  Ticks transfers{};
  for (const CriticalStep &step : explanation.path)
    transfers += step.transfer;
  std::string out = fmt::format("critical path: {} = compute {} + transfers {} over {} ops\n",
                                scale.readable(explanation.longest_path),
                                scale.readable(explanation.longest_path - transfers),
                                scale.readable(transfers), explanation.path.size());
  // Consecutive steps on one device form one segment of the story.
  for (std::size_t i = 0; i < explanation.path.size();) {
    std::size_t j = i;
    while (j + 1 < explanation.path.size() &&
           explanation.path[j + 1].device == explanation.path[i].device &&
           !explanation.path[j + 1].via_dependency) {
      ++j;
    }
    const CriticalStep &first = explanation.path[i];
    const CriticalStep &last = explanation.path[j];
    std::string hop;
    if (first.via_dependency && i > 0) {
      hop = first.transfer.count() > 0
                ? fmt::format(" after {} from device {} (+{} transfer)",
                              op_of(explanation.path[i - 1]), explanation.path[i - 1].device,
                              scale.readable(first.transfer))
                : fmt::format(" after {} from device {}", op_of(explanation.path[i - 1]),
                              explanation.path[i - 1].device);
    }
    out += j == i ? fmt::format("  device {} runs {} [{}, {}]{}\n", first.device, op_of(first),
                                scale.readable(first.start), scale.readable(first.end), hop)
                  : fmt::format("  device {} runs {} .. {} ({} ops) [{}, {}]{}\n", first.device,
                                op_of(first), op_of(last), j - i + 1, scale.readable(first.start),
                                scale.readable(last.end), hop);
    i = j + 1;
  }
  out += "idle time (between a device's first and last op) by what it waited for:\n";
  if (explanation.idle_causes.empty())
    out += "  none: every device runs without gaps\n";
  for (const IdleCause &cause : explanation.idle_causes) {
    out += fmt::format("  device {}: {} waiting for {} ({} gaps)\n", cause.device,
                       scale.readable(cause.idle), cause.waiting_for, cause.gaps);
  }
  return out;
}

} // namespace ppsim
