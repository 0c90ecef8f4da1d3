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
