#pragma once
// The published schedules as a yardstick: no registered generator of the scenario's placement and
// backward form that fits the cap may beat a result (the synthesis and the exact optimum's
// incumbent, docs/synthesis.md and docs/bounds.md, "Exact optimum").
#include "bounds/lower_bounds.h"
#include "sim/metrics.h"
#include "sim/memory.h"
#include "sim/placement.h"
#include "sim/schedules/registry.h"

#include <doctest/doctest.h>

namespace ppsim::testing {

/// Every registered schedule of the scenario's placement and `form` that fits the cap: the
/// result is no slower than any of them. Returns how many were compared.
inline int check_not_slower_than_registered(const ppsim::Scenario &scenario, BackwardForm form,
                                            Ticks makespan) {
  int compared = 0;
  for (const ppsim::ScheduleInfo &info : ppsim::schedule_registry()) {
    if (info.split_backward != (form == BackwardForm::split) ||
        (info.placement == ppsim::PlacementKind::dual_pipe) ||
        ppsim::make_placement(info.placement, scenario.devices, scenario.chunks) !=
            scenario.stage_device ||
        info.refusal(scenario, {}))
      continue;
    ppsim::Schedule schedule;
    try {
      schedule = ppsim::generate_schedule(info, scenario, {});
    } catch (const ppsim::CapUnreachable &) {
      continue;
    }
    const ppsim::Simulation run = ppsim::simulate(scenario, schedule);
    CAPTURE(info.name);
    if (run.metrics.feasible) {
      CHECK(makespan <= run.metrics.makespan);
      ++compared;
    }
  }
  return compared;
}

} // namespace ppsim::testing
