#pragma once
// The cross-op dependency edges of docs/model.md, "Dependencies", for a validated schedule.
// Device order is not an edge here: the engine and the critical-path analysis add it themselves.
#include "sim/op_locator.h"
#include "sim/scenario.h"

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace ppsim {

/// One input of a schedule entry: it may start only after `producer` ends plus `transfer`.
struct OpInput {
  OpRef needed; ///< the producer's sub-op the consumer waits for (for messages)
  std::int32_t producer = 0;
  Ticks transfer; ///< transfer time charged on this edge (0 when on one device)
  bool crosses_devices = false;
};

/// An entry has at most two inputs: one per sub-op of an overlapped pair, or a lumped R's F and
/// backward trigger.
inline constexpr int kMostInputs = 2;
using EntryInputs = std::array<OpInput, kMostInputs>;

/// The inputs of the entry `op` in the order the engine releases them: sub-op by sub-op, each
/// sub-op's by the rules of docs/model.md, "Dependencies" (plus the lumped-remat edge when the
/// scenario asks for it). Returns how many it wrote. Throws Error when a required producer is
/// missing from the schedule.
int entry_inputs(const Scenario &scenario, const OpLocator &locator, const Op &op,
                 EntryInputs &inputs);

/// `consumer` may start only after `producer` ends plus `transfer` (0 on the same device).
struct Dependency {
  std::int32_t producer = 0;
  std::int32_t consumer = 0;
  OpRef needed;   ///< the producer's sub-op the consumer waits for (for messages)
  Ticks transfer; ///< transfer time charged on this edge (0 when on one device)
  bool crosses_devices = false;
};

/// Edges grouped by producer (successor lists).
struct DependencyGraph {
  std::vector<Dependency> edges;              ///< sorted by producer, then build order
  std::vector<std::int32_t> successor_offset; ///< edges of producer e: [offset[e], offset[e+1])
};

/// Edge ids 0..n-1 grouped by their producer (a counting sort, O(edges + entries)): producer x's
/// edges are ids[offset[x] .. offset[x + 1]), in increasing id order.
struct ProducerGroups {
  std::vector<std::int32_t> offset; ///< per entry, and one past the last
  std::vector<std::int32_t> ids;
};
ProducerGroups group_by_producer(std::span<const std::int32_t> producer, std::int32_t entries);

/// Every edge of entry_inputs, entry by entry. Throws as entry_inputs does.
DependencyGraph build_dependencies(const Scenario &scenario, const Schedule &schedule,
                                   const OpLocator &locator);

} // namespace ppsim
