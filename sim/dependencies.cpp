#include "sim/dependencies.h"
#include "base/index.h"

#include "base/error.h"

#include <algorithm>
#include <fmt/format.h>

namespace ppsim {
namespace {

// The op whose completion lets the backward of (stage, microbatch) start: the upstream
// backward (B or BW, whichever exists) or, at the last stage of a pipe, the forward (the loss).
OpRef backward_trigger(const Scenario &scenario, const OpLocator &locator, int stage,
                       int microbatch) {
  if (scenario.is_pipe_exit(stage)) {
    return {OpKind::forward, stage, microbatch};
  }
  const OpRef split{OpKind::backward_input, stage + 1, microbatch};
  return locator.find(split) != OpLocator::kAbsent
             ? split
             : OpRef{OpKind::backward_full, stage + 1, microbatch};
}

class EdgeBuilder {
public:
  EdgeBuilder(const Scenario &scenario, const OpLocator &locator)
      : scenario_(scenario), locator_(locator) {}

  void require(std::int32_t consumer, const OpRef &consumer_op, const OpRef &needed) {
    const std::int32_t producer = locator_.find(needed);
    if (producer == OpLocator::kAbsent) {
      throw Error(fmt::format("{} needs {}, which the schedule does not contain",
                              describe(consumer_op), describe(needed)));
    }
    const auto stage_device = [&](int stage) { return scenario_.stage_device[at(stage)]; };
    Dependency edge;
    edge.producer = producer;
    edge.consumer = consumer;
    edge.needed = needed;
    edge.crosses_devices = stage_device(needed.stage) != stage_device(consumer_op.stage);
    if (edge.crosses_devices) {
      const int boundary = std::min(needed.stage, consumer_op.stage);
      edge.transfer = scenario_.boundary_transfer[at(boundary)];
    }
    edges.push_back(edge);
  }

  std::vector<Dependency> edges;

private:
  const Scenario &scenario_;
  const OpLocator &locator_;
};

} // namespace

DependencyGraph build_dependencies(const Scenario &scenario, const Schedule &schedule,
                                   const OpLocator &locator) {
  EdgeBuilder builder(scenario, locator);
  builder.edges.reserve(schedule.op_count() * 2);
  std::int32_t entry = 0;
  for (const auto &ops : schedule.device_ops) {
    for (const Op &op : ops) {
      for (int part = 0; part < op.sub_op_count(); ++part) {
        const OpRef ref = op.sub_op(part);
        const int s = ref.stage;
        const int j = ref.microbatch;
        switch (ref.kind) {
        case OpKind::forward:
          if (!scenario.is_pipe_entry(s))
            builder.require(entry, ref, {OpKind::forward, s - 1, j});
          break;
        case OpKind::backward_input:
        case OpKind::backward_full:
          builder.require(entry, ref, backward_trigger(scenario, locator, s, j));
          break;
        case OpKind::backward_weight:
          builder.require(entry, ref, {OpKind::backward_input, s, j});
          break;
        case OpKind::recompute_forward:
          builder.require(entry, ref, {OpKind::forward, s, j});
          if (scenario.remat_timing == RematTiming::lumped) {
            builder.require(entry, ref, backward_trigger(scenario, locator, s, j));
          }
          break;
        case OpKind::recompute_weight_inputs:
        case OpKind::recompute_full_backward:
          builder.require(entry, ref, {OpKind::backward_input, s, j});
          break;
        case OpKind::overlapped:
          break; // sub_op() never returns the OV kind itself
        }
      }
      ++entry;
    }
  }

  // Counting sort by producer: successor lists in build order, O(edges).
  DependencyGraph graph;
  graph.successor_offset.assign(at(entry) + 1, 0);
  graph.predecessor_count.assign(at(entry), 0);
  for (const Dependency &edge : builder.edges) {
    ++graph.successor_offset[at(edge.producer) + 1];
    ++graph.predecessor_count[at(edge.consumer)];
  }
  for (std::size_t e = 0; e < at(entry); ++e) {
    graph.successor_offset[e + 1] += graph.successor_offset[e];
  }
  graph.edges.resize(builder.edges.size());
  std::vector<std::int32_t> cursor(graph.successor_offset.begin(),
                                   graph.successor_offset.end() - 1);
  for (const Dependency &edge : builder.edges) {
    graph.edges[at(cursor[at(edge.producer)]++)] = edge;
  }
  return graph;
}

void throw_deadlock(const Schedule &schedule, const OpLocator &locator,
                    const DependencyGraph &graph, const std::vector<std::int32_t> &next_position,
                    const std::vector<bool> &ended) {
  std::vector<std::string> waits;
  for (int g = 0; g < schedule.device_count(); ++g) {
    const auto &ops = schedule.device_ops[at(g)];
    const std::int32_t position = next_position[at(g)];
    if (position >= static_cast<std::int32_t>(ops.size()))
      continue;
    const std::int32_t entry = locator.entry_offset(g) + position;
    std::string needed = "?";
    for (const Dependency &edge : graph.edges) {
      if (edge.consumer == entry && !ended[at(edge.producer)]) {
        needed = describe(edge.needed);
        break;
      }
    }
    waits.push_back(
        fmt::format("device {} waits at {} for {}", g, describe(ops[at(position)]), needed));
  }
  throw Error(fmt::format("schedule '{}' deadlocks: {}", schedule.name, fmt::join(waits, "; ")));
}

} // namespace ppsim
