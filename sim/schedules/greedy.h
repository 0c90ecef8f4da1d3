#pragma once
// The greedy generators that time ops while they order them (docs/schedules.md, "zb-auto" and
// "zb-v-greedy"). Their internal end times are exposed so tests can check they equal the engine's
// ASAP times.
#include "base/time.h"
#include "sim/scenario.h"
#include "sim/schedule.h"

#include <vector>

namespace ppsim::schedules {

/// A generated order with the generator's own end time of every entry (same shape as
/// `schedule.device_ops`).
struct TimedSchedule {
  Schedule schedule;
  std::vector<std::vector<Ticks>> end;
};

/// What a greedy zero-bubble generator books for each pass of one stage, in the checked track
/// (sim/memory.h) as the engine accounts it (docs/model.md, "Memory models"): F allocates the
/// stored activation, B frees all of it but the W stash, W frees the stash less what outlives it.
/// In the byte model these are the cost file's bytes, so the plan and the memory report agree;
/// the caps stay shares of the stored activation (`cap_share * mem_f`) in every model.
struct PassMemory {
  double forward = 0;  ///< > 0
  double backward = 0; ///< <= 0
  double weight = 0;   ///< <= 0
};
PassMemory pass_memory(const Scenario &scenario, int stage);

/// ZB automatic heuristic (docs/schedules.md, "zb-auto") with a cap of `cap_share` stage
/// activations per stage (`cap_share * mem_f[s]`); best of the 8 flag combinations by max span.
TimedSchedule zb_auto_timed(const Scenario &scenario, double cap_share);

/// ZB-V greedy (docs/schedules.md, "zb-v-greedy") with a cap of `cap_share` device shares of
/// activations per device (`cap_share * (mem_f[a] + mem_f[b])`).
TimedSchedule zb_v_greedy_timed(const Scenario &scenario, double cap_share);

/// The stable pattern of a controllable-memory V schedule (docs/schedules.md, "v-min and v-half").
enum class VPattern { min, half };

/// V-Min or V-Half (docs/schedules.md, "v-min and v-half"): the order built with unit costs, timed
/// with the scenario's costs.
TimedSchedule v_family_timed(const Scenario &scenario, VPattern pattern);

} // namespace ppsim::schedules
