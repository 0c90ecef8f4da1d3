#pragma once
// The `--remat POLICY` option of `ppsim simulate` (docs/model.md, "Command line and JSON",
// docs/remat.md, "Simple policies"): turns a base schedule into the schedule with the policy's
// recomputation ops.
#include "remat/stage_remat_ilp.h"
#include "run/run_input.h"

#include <string>

namespace ppsim {

/// A run after its recomputation policy: the schedule with the policy's ops and the scenario it
/// runs under (only `selective` changes that: a cheaper R and a larger checkpoint).
struct PolicyRun {
  Scenario scenario;
  Schedule schedule;
  std::string status; ///< the ILP's (RematSolution::status_label); empty for other policies
};

/// Why remat.checkpoint_levels without model.costs_file is refused.
inline constexpr const char *kLevelsNeedCostFile =
    "checkpoint levels come from a per-layer cost file: give model.costs_file";

/// `scenario` with the levels a remat plan may choose per (s,j) (docs/remat.md, "Checkpoint
/// levels"): the checkpoint levels `input.remat_checkpoint_levels` asks for, from the rotor front
/// of each stage's layers in the input's cost file, then selective recomputation where the cost
/// file measures it (with_selective_level). Throws Error naming the field when levels are asked
/// for without a cost file.
Scenario scenario_with_remat_levels(const RunInput &input, const Scenario &scenario);

/// The remat ILP's limits of `input` (remat.time_limit, remat.gap, remat.node_limit).
IlpOptions ilp_options(const RunInput &input);

/// Throws Error "unknown remat policy 'x' (expected ...)" unless `policy` names one
/// apply_remat_policy knows.
void check_policy_name(const std::string &policy);

/// `none` (unchanged), `full` (full_forward_plan), `selective` (measured: the selective level on
/// every (s,j), selective_level_plan; without a cost file: selective_scenario's fractions with R
/// on every (s,j); a cost file that does not measure it is refused), `ilp` (solve_stage_remat
/// under the scenario's cap, with the levels of scenario_with_remat_levels) or `file:PATH` (the CSV of docs/remat.md). Throws Error
/// for an unknown policy, an unreadable file, a bad row, or when the ILP finds no plan.
PolicyRun apply_remat_policy(const RunInput &input, const Scenario &scenario,
                             const Schedule &base, const std::string &policy,
                             const IlpOptions &ilp = {});

} // namespace ppsim
