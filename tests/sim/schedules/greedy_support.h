#pragma once
// Helpers for the greedy generator tests: the engine's end time of every entry, laid out like a
// generator's internal times, so "internal times == engine ASAP times" is one == check.
#include "base/index.h"
#include "sim/engine.h"
#include "sim/schedules/greedy.h"
#include "sim/validate.h"

#include <vector>

namespace ppsim::testing {

/// End time of every entry of `schedule` under `scenario`, per device in list order.
inline std::vector<std::vector<Ticks>> engine_ends(const Scenario &scenario,
                                                   const Schedule &schedule) {
  const Engine engine{scenario, schedule};
  const Timing result = engine.run();
  std::vector<std::vector<Ticks>> ends(schedule.device_ops.size());
  for (int g = 0; g < schedule.device_count(); ++g) {
    const auto size = schedule.device_ops[ppsim::at(g)].size();
    for (std::size_t k = 0; k < size; ++k) {
      ends[ppsim::at(g)].push_back(result.end[ppsim::at(engine.locator().entry_offset(g)) + k]);
    }
  }
  return ends;
}

} // namespace ppsim::testing
