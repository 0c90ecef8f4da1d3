#pragma once
// Helpers for the greedy generator tests: the engine's end time of every entry, laid out like a
// generator's internal times, so "internal times == engine ASAP times" is one == check, and that
// check with the cap's.
#include "base/index.h"
#include "sim/engine.h"
#include "sim/metrics.h"
#include "sim/schedules/greedy.h"
#include "sim/validate.h"

#include <doctest/doctest.h>

#include <vector>

namespace ppsim::testing {

/// End time of every entry of `schedule` under `scenario`, per device in list order.
inline std::vector<std::vector<Ticks>> engine_ends(const Scenario &scenario,
                                                   const Schedule &schedule) {
  const Engine engine{scenario, schedule};
  const Timing result = engine.run(false);
  std::vector<std::vector<Ticks>> ends(schedule.device_ops.size());
  for (int g = 0; g < schedule.device_count(); ++g) {
    const auto size = schedule.device_ops[ppsim::at(g)].size();
    for (std::size_t k = 0; k < size; ++k) {
      ends[ppsim::at(g)].push_back(result.end[ppsim::at(engine.locator().entry_offset(g)) + k]);
    }
  }
  return ends;
}

/// Checks what a greedy generator promises: `ends`, its own end times, are the engine's ASAP end
/// times, and no device's peak exceeds `cap_activations` (K units). Returns the simulation.
inline Simulation check_asap_within_cap(const Scenario &scenario, const Schedule &schedule,
                                        const std::vector<std::vector<Ticks>> &ends,
                                        double cap_activations) {
  CHECK(engine_ends(scenario, schedule) == ends);
  Simulation simulation = simulate(scenario, schedule);
  for (const DeviceMetrics &device : simulation.metrics.devices)
    CHECK(device.peak_activations <= cap_activations);
  return simulation;
}

} // namespace ppsim::testing
