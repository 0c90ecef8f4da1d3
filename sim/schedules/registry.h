#pragma once
// name -> generator (the one singleton CONVENTIONS allows). Adding a schedule: write its
// generator in a family file of this folder, declare it in families.h, add one row to the table
// in registry.cpp.
#include "sim/placement.h"
#include "sim/scenario.h"
#include "sim/schedule.h"

#include <optional>
#include <string>
#include <vector>

namespace ppsim {

/// Generator parameters that are not part of the instance itself.
struct GeneratorOptions {
  int group_size = 0;                  ///< interleaved g; 0 = PyTorch's m / max(1, m div p)
};

using GeneratorFunction = Schedule (*)(const Scenario &, const GeneratorOptions &);

struct ScheduleInfo {
  std::string name;
  std::string description;   ///< one line, for `ppsim schedules`
  PlacementKind placement;
  int default_chunks;        ///< v when the user gives none (1 single wave, 2 V shape)
  bool split_backward;       ///< emits B and W rather than BW
  GeneratorFunction generate;
};

/// Every registered schedule, in listing order.
const std::vector<ScheduleInfo> &schedule_registry();

/// The entry named `name`; throws Error "unknown schedule 'x', did you mean 'y'?" otherwise.
const ScheduleInfo &find_schedule(const std::string &name);

/// Runs the generator and names the result.
Schedule generate_schedule(const ScheduleInfo &info, const Scenario &scenario,
                           const GeneratorOptions &options);

} // namespace ppsim
