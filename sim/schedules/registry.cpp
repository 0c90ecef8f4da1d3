#include "sim/schedules/registry.h"

#include "sim/error.h"
#include "sim/schedules/families.h"

#include <fmt/format.h>

namespace ppsim {

const std::vector<ScheduleInfo> &schedule_registry() {
  static const std::vector<ScheduleInfo> registry{
      {"gpipe", "all forwards, then all backwards (GPipe; AFAB with several stages per device)",
       PlacementKind::single_wave, 1, false, schedules::gpipe},
      {"1f1b", "one forward one backward after a p-1-r warm-up (PipeDream-flush, Megatron)",
       PlacementKind::single_wave, 1, false, schedules::one_f_one_b},
      {"1f1b-split", "1F1B order with B and W as separate ops, W right after its B",
       PlacementKind::single_wave, 1, true, schedules::one_f_one_b_split},
  };
  return registry;
}

const ScheduleInfo &find_schedule(const std::string &name) {
  std::vector<std::string> names;
  for (const ScheduleInfo &info : schedule_registry()) {
    if (info.name == name) return info;
    names.push_back(info.name);
  }
  const std::string suggestion = closest_name(name, names);
  if (suggestion.empty()) {
    throw Error(fmt::format("unknown schedule '{}' (see 'ppsim schedules')", name));
  }
  throw Error(fmt::format("unknown schedule '{}', did you mean '{}'?", name, suggestion));
}

Schedule generate_schedule(const ScheduleInfo &info, const Scenario &scenario,
                           const GeneratorOptions &options) {
  Schedule schedule = info.generate(scenario, options);
  schedule.name = info.name;
  return schedule;
}

} // namespace ppsim
