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

/// A registered generator's schedule for the scenario's placement and backward form, replayed:
/// `fits` says whether it stays under the cap as it is (its makespan is the replay's either way).
struct RegisteredSchedule {
  Incumbent run;
  bool fits = false;
};

/// Every registered generator of the scenario's placement and backward form that accepts its
/// p, m, v (the registry's precondition) and finds a schedule, in the registry's order.
std::vector<RegisteredSchedule> registered_schedules(const Scenario &scenario, BackwardForm form);

/// The serial schedule and every registered generator's schedule of the scenario's placement and
/// backward form that fit the cap, fastest first (ties keep the registry's order, serial first);
/// empty when none fits.
std::vector<Incumbent> known_schedules(const Scenario &scenario, BackwardForm form, bool recompute);
/// known_schedules with the registered schedules already generated (registered_schedules).
std::vector<Incumbent> known_schedules(const Scenario &scenario, BackwardForm form, bool recompute,
                                       const std::vector<RegisteredSchedule> &registered);

/// The fastest memory-feasible schedule among the serial one and the registered generators that
/// fit the scenario's placement and backward form (ties keep the earlier, serial first). Throws
/// Error when none fits (the cap is below one activation of some stage, or the serial schedule's
/// peak in the byte model).
Incumbent best_known_schedule(const Scenario &scenario, BackwardForm form, bool recompute);

/// True when the cap can bind: some device would hold more than the checked track's cap (K, or
/// the budget in the byte model) if it kept every activation.
bool cap_can_bind(const Scenario &scenario);

} // namespace ppsim
