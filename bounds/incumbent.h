#pragma once
// The best schedule known without a search (docs/bounds.md, "Exact optimum", step 1): a serial
// schedule that every instance has, and every registered generator of the scenario's placement
// and backward form that fits the cap. The exact optimum takes it as its horizon, synthesis
// (docs/synthesis.md) as its seed.
#include "base/time.h"
#include "bounds/lower_bounds.h"
#include "sim/scenario.h"
#include "sim/schedule.h"

#include <string>
#include <vector>

namespace ppsim {

/// A schedule and its makespan, named after the generator that made it ("serial" for ours).
struct Incumbent {
  std::string name;
  Schedule schedule;
  Ticks makespan;
};

/// Microbatches one after another, each running its forwards then its backwards (R right before
/// each backward when `recompute`), so at most one activation per device is ever resident.
Schedule serial_schedule(const Scenario &scenario, BackwardForm form, bool recompute);

/// The serial schedule and every registered generator's schedule that fits the scenario's
/// placement, backward form and cap, fastest first (ties keep the registry's order, serial
/// first). Throws Error when the cap is below one activation of some stage.
std::vector<Incumbent> known_schedules(const Scenario &scenario, BackwardForm form, bool recompute);

/// The fastest memory-feasible schedule among the serial one and the registered generators that
/// fit the scenario's placement and backward form (ties keep the earlier, serial first). Throws
/// Error when the cap is below one activation of some stage.
Incumbent best_known_schedule(const Scenario &scenario, BackwardForm form, bool recompute);

/// True when the cap can bind: some device would hold more than K if it kept every activation.
bool cap_can_bind(const Scenario &scenario);

} // namespace ppsim
