#pragma once
// The cross-op dependency edges of docs/model.md, "Dependencies", for a validated schedule.
// Device order is not an edge here: the engine and the critical-path analysis add it themselves.
#include "sim/op_locator.h"
#include "sim/scenario.h"

#include <cstdint>
#include <vector>

namespace ppsim {

/// `consumer` may start only after `producer` ends plus `transfer` (0 on the same device).
struct Dependency {
  std::int32_t producer = 0;
  std::int32_t consumer = 0;
  OpRef needed;   ///< the producer's sub-op the consumer waits for (for messages)
  Ticks transfer; ///< transfer time charged on this edge (0 when on one device)
  bool crosses_devices = false;
};

/// Edges grouped by producer (successor lists) and the number of edges entering each entry.
struct DependencyGraph {
  std::vector<Dependency> edges;               ///< sorted by producer, then build order
  std::vector<std::int32_t> successor_offset;  ///< edges of producer e: [offset[e], offset[e+1])
  std::vector<std::int32_t> predecessor_count; ///< per entry
};

/// Builds every edge of docs/model.md, "Dependencies" (plus the lumped-remat edge when the
/// scenario asks for it).
/// Throws Error when a required producer is missing from the schedule.
DependencyGraph build_dependencies(const Scenario &scenario, const Schedule &schedule,
                                   const OpLocator &locator);

/// Throws the deadlock Error of a run that stopped with ops left: for each device whose list is
/// not done (`next_position`, the first op it did not run), that op and the first of its inputs
/// that never ended.
[[noreturn]] void throw_deadlock(const Schedule &schedule, const OpLocator &locator,
                                 const DependencyGraph &graph,
                                 const std::vector<std::int32_t> &next_position,
                                 const std::vector<bool> &ended);

} // namespace ppsim
