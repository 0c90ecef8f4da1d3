#include "sim/dependencies.h"
#include "base/index.h"

#include "base/assert.h"
#include "base/error.h"

#include <algorithm>
#include <fmt/format.h>

namespace ppsim {
namespace {

// The op whose completion lets the backward of (stage, microbatch) start: the upstream
// backward (B or BW, whichever exists) or, at the last stage of a pipe, the forward (the loss).
// Inlined, as it is on every backward's path: as a call its result went through the stack.
[[gnu::always_inline]] inline OpRef backward_trigger(const Scenario &scenario,
                                                    const OpLocator &locator, int stage,
                                                    int microbatch) {
  if (scenario.is_pipe_exit(stage))
    return {OpKind::forward, stage, microbatch};
  const OpRef split{OpKind::backward_input, stage + 1, microbatch};
  return locator.find(split) != OpLocator::kAbsent
             ? split
             : OpRef{OpKind::backward_full, stage + 1, microbatch};
}

// By value: a reference would send the hot path's ops through the stack too.
[[noreturn]] void throw_missing(const OpRef consumer, const OpRef needed) {
  throw Error(fmt::format("{} needs {}, which the schedule does not contain", describe(consumer),
                          describe(needed)));
}

} // namespace

int entry_inputs(const Scenario &scenario, const OpLocator &locator, const Op &op,
                 EntryInputs &inputs) {
  int count = 0;
  // The ops travel by value and the entry is looked up here, so they stay in registers: through
  // the stack (written a field at a time, read back whole) they cost a store-forwarding stall
  // on every input.
  const auto require = [&](const OpRef consumer_op, const OpRef needed) {
    const std::int32_t producer = locator.find(needed);
    if (producer == OpLocator::kAbsent)
      throw_missing(consumer_op, needed);
    PPSIM_ASSERT(count < kMostInputs);
    OpInput &input = inputs[at(count++)];
    input.needed = needed;
    input.producer = producer;
    input.crosses_devices = scenario.stage_device[at(needed.stage)] !=
                            scenario.stage_device[at(consumer_op.stage)];
    input.transfer =
        input.crosses_devices
            ? scenario.boundary_transfer[at(std::min(needed.stage, consumer_op.stage))]
            : Ticks{};
  };
  for (int part = 0; part < op.sub_op_count(); ++part) {
    const OpRef ref = op.sub_op(part);
    const int s = ref.stage;
    const int j = ref.microbatch;
    switch (ref.kind) {
    case OpKind::forward:
      if (!scenario.is_pipe_entry(s))
        require(ref, {OpKind::forward, s - 1, j});
      break;
    case OpKind::backward_input:
    case OpKind::backward_full:
      require(ref, backward_trigger(scenario, locator, s, j));
      break;
    case OpKind::backward_weight:
      require(ref, {OpKind::backward_input, s, j});
      break;
    case OpKind::recompute_forward:
      require(ref, {OpKind::forward, s, j});
      if (scenario.remat_timing == RematTiming::lumped)
        require(ref, backward_trigger(scenario, locator, s, j));
      break;
    case OpKind::recompute_weight_inputs:
    case OpKind::recompute_full_backward:
      require(ref, {OpKind::backward_input, s, j});
      break;
    case OpKind::overlapped:
      break; // sub_op() never returns the OV kind itself
    }
  }
  return count;
}

DependencyGraph build_dependencies(const Scenario &scenario, const Schedule &schedule,
                                   const OpLocator &locator) {
  std::vector<Dependency> edges;
  edges.reserve(schedule.op_count() * 2);
  EntryInputs inputs;
  std::int32_t entry = 0;
  for (const auto &ops : schedule.device_ops) {
    for (const Op &op : ops) {
      const int count = entry_inputs(scenario, locator, op, inputs);
      for (int k = 0; k < count; ++k) {
        const OpInput &input = inputs[at(k)];
        edges.push_back(Dependency{input.producer, entry, input.needed, input.transfer,
                                   input.crosses_devices});
      }
      ++entry;
    }
  }

  std::vector<std::int32_t> producers(edges.size());
  for (std::size_t k = 0; k < edges.size(); ++k)
    producers[k] = edges[k].producer;
  ProducerGroups groups = group_by_producer(producers, entry);
  DependencyGraph graph;
  graph.successor_offset = std::move(groups.offset);
  graph.edges.reserve(edges.size());
  for (const std::int32_t id : groups.ids)
    graph.edges.push_back(edges[at(id)]);
  return graph;
}

ProducerGroups group_by_producer(std::span<const std::int32_t> producer, std::int32_t entries) {
  ProducerGroups groups;
  groups.offset.assign(at(entries) + 1, 0);
  for (const std::int32_t x : producer)
    ++groups.offset[at(x) + 1];
  for (std::size_t x = 0; x < at(entries); ++x)
    groups.offset[x + 1] += groups.offset[x];
  groups.ids.resize(producer.size());
  std::vector<std::int32_t> cursor(groups.offset.begin(), groups.offset.end() - 1);
  for (std::size_t id = 0; id < producer.size(); ++id)
    groups.ids[at(cursor[at(producer[id])]++)] = static_cast<std::int32_t>(id);
  return groups;
}

} // namespace ppsim
