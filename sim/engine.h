#pragma once
// The discrete-event engine (docs/model.md, "Engine"): replays per-device op lists with ASAP
// timing, links with latency, bandwidth, optional contention and blocking sends.
#include "sim/dependencies.h"
#include "sim/op_locator.h"
#include "sim/scenario.h"
#include "sim/schedule.h"

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
  Timing run() const;

  [[nodiscard]] const OpLocator &locator() const { return *locator_; }
  [[nodiscard]] const DependencyGraph &dependencies() const { return dependencies_; }

private:
  const Scenario &scenario_;
  const Schedule &schedule_;
  std::shared_ptr<const OpLocator> locator_;
  DependencyGraph dependencies_;
};

} // namespace ppsim
