#pragma once
// Makespan closed forms of the standard schedules (docs/bounds.md, "Closed forms"), used as
// regression checks and printed by `ppsim bounds` next to the lower bounds.
#include "base/time.h"
#include "sim/scenario.h"

#include <optional>
#include <string_view>

namespace ppsim {

/// The makespan of registered schedule `schedule` on `scenario` by its closed form (the registry
/// entry's, see sim/schedules/families.h for each formula), or nullopt when the schedule has none
/// or the scenario is outside its validity range. Every form needs uniform stages (equal F, B, W,
/// R on every stage), no contention, no blocking sends and no faster overlapped ops; all but
/// GPipe need zero transfer time. `group_size` is Megatron's g (0 = p).
std::optional<Ticks> closed_form_makespan(const Scenario &scenario, std::string_view schedule,
                                          int group_size = 0);

} // namespace ppsim
