#pragma once
// The engine (docs/model.md, "Engine"): replays per-device op lists with ASAP timing, links with
// latency, bandwidth, optional contention and blocking sends, in one pass over a topological
// order (sim/timing_graph.h, the re-timer's core).
#include "sim/op_locator.h"
#include "sim/scenario.h"
#include "sim/schedule.h"
#include "sim/timing_graph.h"

#include <memory>
#include <vector>

namespace ppsim {

/// One point-to-point message as it crossed its link.
struct Transfer {
  std::int32_t producer = 0;
  std::int32_t consumer = 0;
  std::int32_t from_device = 0;
  std::int32_t to_device = 0;
  Ticks start;
  Ticks end; ///< arrival at the consumer's device
};

/// When every schedule entry and every transfer ran (entries numbered as in OpLocator).
struct Timing {
  std::vector<Ticks> start;
  std::vector<Ticks> end;
  /// Grouped by sending device, each group in its list's order (a producer's messages in the
  /// order their consumers' inputs are built): the order in which each link serves them. Empty
  /// when the run was asked not to list them (Engine::run, SimulateOptions::timelines).
  std::vector<Transfer> transfers;
};

/// An engine is a value: construct, run, discard. The schedule must have passed
/// validate_schedule; a cross-device cycle throws Error naming every blocked op.
class Engine {
public:
  Engine(const Scenario &scenario, const Schedule &schedule);
  /// With the index validate_schedule returned for `schedule`.
  Engine(const Scenario &scenario, const Schedule &schedule,
         std::shared_ptr<const OpLocator> locator);
  /// Times every entry; lists the transfers too when `with_transfers` (else they stay empty).
  Timing run(bool with_transfers = true) const;

  [[nodiscard]] const OpLocator &locator() const { return *locator_; }

private:
  const Scenario &scenario_;
  const Schedule &schedule_;
  std::shared_ptr<const OpLocator> locator_;
  TimingGraph graph_;
};

} // namespace ppsim
