#pragma once
// Why the bubbles exist: the executed op DAG (dependency edges weighted by durations and
// transfer times, plus device-order edges), its longest path, and where each device's idle
// time went. Built with Boost.Graph.
#include "sim/engine.h"
#include "sim/scenario.h"
#include "sim/schedule.h"

#include <string>
#include <vector>

namespace ppsim {

/// One op on the critical path and how it was reached.
struct CriticalStep {
  std::int32_t entry = 0;
  int device = 0;
  Ticks start;
  Ticks end;
  bool via_dependency = false; ///< reached over a dependency edge (else: the device's order)
  Ticks transfer;              ///< transfer time on that edge
};

/// Idle time of one device spent waiting for one kind of input from one device.
struct IdleCause {
  int device = 0;
  std::string waiting_for; ///< "forward from device 1", "gradient from device 2", "start"
  Ticks idle;
  int gaps = 0;
};

struct BubbleExplanation {
  Ticks longest_path;                 ///< length of the DAG's longest path
  std::vector<CriticalStep> path;     ///< in time order
  std::vector<IdleCause> idle_causes; ///< per device, largest first
  /// Per entry, the entry whose end (plus its transfer) came last among the op's inputs and its
  /// device's previous op: what the op waited for. kNoWait for an op that started with nothing
  /// to wait for.
  std::vector<std::int32_t> waited_for;
  static constexpr std::int32_t kNoWait = -1;
};

/// Builds the DAG of the executed schedule and explains it. With uncontended, non-blocking links
/// the longest path equals the simulated makespan (the engine's ASAP timing is the DAG's
/// earliest-start schedule); with contention or blocking sends it is a lower bound.
BubbleExplanation explain_bubbles(const Scenario &scenario, const Schedule &schedule,
                                  const Timing &result);

/// The explanation as a short human story (a few lines per device).
std::string explanation_text(const Scenario &scenario, const Schedule &schedule,
                             const BubbleExplanation &explanation);

} // namespace ppsim
