#pragma once
// Exact optimum on tiny instances (docs/bounds.md, "Exact optimum"): a time-indexed ILP solved with
// CBC through solver/milp.h, seeded with the best registered schedule as horizon. It exists to
// validate the bounds and the schedules (`ppsim optimal`), so it refuses instances past a size
// limit.
#include "base/progress.h"
#include "base/time.h"
#include "bounds/incumbent.h"
#include "bounds/lower_bounds.h"
#include "sim/scenario.h"
#include "sim/schedule.h"
#include "solver/milp.h"

#include <cstdint>
#include <optional>
#include <string>

namespace ppsim {

struct ExactOptions {
  double time_limit_seconds = 60;
  /// Branch-and-bound nodes of each horizon's solve (0: no limit): a work limit that stops the
  /// search at the same point on any machine; the time limit stays a guard.
  std::int64_t node_limit = 0;
  /// Size guard: maximum number of start-time binaries z_{o,t}; past it exact_optimum throws.
  std::int64_t max_start_variables = 20000;
  /// Skip the ILP when the best registered schedule already meets the best lower bound.
  bool stop_when_bound_met = true;
  /// A known schedule to start from (its makespan is the horizon) instead of the best
  /// registered one, which is then not generated: a search that already beat it (synthesis).
  std::optional<Incumbent> incumbent;
  /// Hears of each horizon decided, from the best lower bound up to the incumbent's makespan (the
  /// first feasible one completes them all).
  ProgressFn progress;
};

struct ExactResult {
  Ticks makespan;    ///< of `schedule`; the optimum when `proven_optimal`
  Ticks lower_bound; ///< proven bound on the optimum (= makespan when proven)
  bool proven_optimal = false;
  Schedule schedule;     ///< per-device orders reaching `makespan` (R, RW, RBW: recomputation)
  /// "ilp", "ilp (time limit)", "ilp (node limit)", "ilp (solver failed)" or "lower bound met"
  std::string method;
  std::string incumbent; ///< schedule that gave the horizon (registered, "serial" or the caller's)
  std::int64_t start_variables = 0; ///< z_{o,t} binaries of the ILP (0 when skipped)
  /// The limit that stopped the search before its proof, if one did.
  solver::Limit limit = solver::Limit::none;
  double solve_seconds = 0;
};

/// The minimum makespan over every schedule of `scenario` whose backward has form `form`, with
/// per-(s,j) recomputation allowed when a cap can bind (R, and RW or RBW with a split backward;
/// count or zb activation track, cap K, remat timing of the scenario, no contention). Model of docs/bounds.md, "Exact optimum": start-time
/// binaries per op and tick, keep binaries y_{s,j}, residency u_{s,j,t}, device capacity and memory
/// per tick; windows tightened by the path quantities of docs/bounds.md, "Model and assumptions
/// (all bounds)"; microbatches of the entry stage start in increasing order (a relabeling, so
/// valid). Throws Error past `max_start_variables`, for the byte memory model, for checkpoint
/// levels, and when the cap is below one activation.
ExactResult exact_optimum(const Scenario &scenario, BackwardForm form,
                          const ExactOptions &options = {});

} // namespace ppsim
