#pragma once
// Auto mode (docs/remat.md, "--auto", after ELF's AutoScheduler): for one cap, solve the
// StageRemat ILP for every candidate base schedule, replay each plan and rank the schedules; which
// one wins changes with the cap once remat is allowed.
#include "base/progress.h"
#include "remat/stage_remat_ilp.h"
#include "sim/scenario_builder.h"

#include <optional>
#include <string>
#include <vector>

namespace ppsim {

/// docs/remat.md, "--auto" default list, restricted to the schedules registered in this build.
std::vector<std::string> default_auto_candidates();

struct AutoCandidate {
  std::string schedule;
  /// Solver status, "as generated" (the schedule already recomputes: replayed as is),
  /// "infeasible", "incompatible" or "error".
  std::string status;
  std::string note;  ///< the error sentence when not solved
  Scenario scenario; ///< built for this schedule (placement, tick scale)
  std::optional<RematSolution> solution;
  double peak = 0;    ///< largest device peak of the capped track in the replay
  double seconds = 0; ///< build + solve + replay

  [[nodiscard]] bool solved() const { return solution.has_value(); }
};

/// Candidates ranked: solved first by replayed max span, then fewer recomputed ops, then
/// candidate order; unsolved ones follow in candidate order. `threads` > 1 solves candidates in
/// parallel (the ranking does not depend on it). options.time_limit_seconds is the ranking's:
/// each candidate gets limit x threads / candidates. `progress` hears of each candidate solved,
/// named "schedule: status".
std::vector<AutoCandidate> rank_schedules(const ScenarioInput &input,
                                          const std::vector<std::string> &candidates,
                                          const IlpOptions &options, int threads = 1,
                                          const ProgressFn &progress = {});

} // namespace ppsim
