#pragma once
// Structural checks of docs/model.md, "Validation and exit codes", run on every schedule before
// timing.
#include "sim/op_locator.h"
#include "sim/scenario.h"
#include "sim/schedule.h"

#include <string>

namespace ppsim {

/// Where a schedule came from, so errors can name the file and line (row g of a CSV file is
/// line first_line + g). Generated schedules leave `file` empty.
struct ScheduleOrigin {
  std::string file;
  int first_line = 1;
};

/// Throws Error naming device, position and op for the first violated rule (placement, ids,
/// duplicates, forward count, backward form, per-device order, OV sub-ops).
/// Cross-device cycles are left to the engine, which reports them as a deadlock.
/// Returns the index it built, for the engine (simulate_validated), so a run indexes once.
OpLocator validate_schedule(const Scenario &scenario, const Schedule &schedule,
                            const ScheduleOrigin &origin = {});

} // namespace ppsim
