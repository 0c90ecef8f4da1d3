#pragma once
// The `--remat POLICY` option of `ppsim simulate` (spec model.md 10, remat.md 6): turns a base
// schedule into the schedule with the policy's recomputation ops.
#include "remat/stage_remat_ilp.h"

#include <string>

namespace ppsim {

/// `none` (unchanged), `full` (full_forward_plan), `ilp` (solve_stage_remat under the scenario's
/// cap) or `file:PATH` (the CSV of remat.md 6). Throws Error for an unknown policy, an unreadable
/// file, a bad row, or when the ILP finds no plan.
Schedule apply_remat_policy(const Scenario &scenario, const Schedule &base,
                            const std::string &policy, const IlpOptions &ilp = {});

} // namespace ppsim
