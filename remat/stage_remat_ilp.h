#pragma once
// The StageRemat ILP, ppsim form (docs/remat.md, "The ILP (ppsim form)"; reference: ELF,
// topal-team/elf
// `elf/scheduling/ilp.py`, and HAL hal-05151601): for a fixed base schedule, choose per
// (stage, microbatch) forward remat x (R), backward activation remat y (RW) and full backward
// remat z (RBW) so that every device's memory stays under the cap and the slowest device
// span is minimal. Recompute ops have explicit positions (R right before B/BW, RW/RBW right
// before W), each rank's first op is pinned to its ASAP time, and memory increments are those
// of the engine's memory model, so the replayed span equals the ILP objective. This unit solves
// the model of remat/stage_remat_model.h from a greedy start and replays the plan.
#include "base/error.h"
#include "remat/plan.h"
#include "remat/stage_remat_model.h"
#include "sim/metrics.h"
#include "solver/milp.h"

#include <atomic>
#include <string>
#include <vector>

namespace ppsim {

struct IlpOptions {
  double time_limit_seconds = 60; ///< bounds the whole solve_stage_remat call
  double relative_gap = 0.03;
  IlpForm form = IlpForm::ppsim;
  /// When set (Ctrl-C in Python), the solves end as at the time limit.
  const std::atomic<bool> *stop = nullptr;
  /// Branch-and-bound nodes each solve may explore (0: no limit; remat.node_limit): a work
  /// limit that gives the same plan on any machine, the time limit staying a guard.
  std::int64_t node_limit = 0;
};

/// A solved and replayed plan.
struct RematSolution {
  solver::Status status = solver::Status::no_solution;
  RematPlan plan;
  Schedule schedule;     ///< base with the plan's ops inserted (for `elf`, the split base)
  Simulation simulation; ///< engine replay of `schedule` (for `elf`, with lumped timing)
  double objective = 0;  ///< Tmax of the plan in ticks (the ILP's value, or the replay's)
  double best_bound = 0; ///< proven lower bound on Tmax in ticks
  double seconds = 0;    ///< wall-clock time of the whole solve
  bool first_ops_pinned = true;
  /// The plan is the greedy start, not improved by the solver within the time limit (which
  /// then proved only `best_bound`).
  bool from_start = false;
  std::string failure; ///< why there is no plan, when !found()
  /// The limit that stopped the search before its proof (time or nodes), if one did.
  solver::Limit limit = solver::Limit::none;

  /// A plan was found (optimal, or the best one when the time limit stopped the proof).
  [[nodiscard]] bool found() const {
    return status == solver::Status::optimal || status == solver::Status::feasible;
  }
  /// What a table says of the plan: "optimal" only when the bound meets the objective, else
  /// "gap 2.13%" (objective over the proven bound, as bounds/analyzer.h's gap_to_bound), whether
  /// the solver stopped within the requested relative gap or at the time limit; without a plan,
  /// the solver status.
  [[nodiscard]] std::string status_label() const;
};

/// Solves the ILP and replays the chosen plan, within options.time_limit_seconds in all. The
/// search starts from the greedy plan (or the least-peak plan), so a time limit returns the
/// best plan so far with its proven bound. Throws Error "cannot fit schedule 'X' within cap Y
/// (budget Y in the byte model); the least peak any remat plan reaches is Z" when no plan fits
/// the cap (a user error); when the solver process dies, or the limit ends before any plan,
/// returns a solution that is not found() and says why in `failure`.
RematSolution solve_stage_remat(const Scenario &scenario, const Schedule &base,
                                const IlpOptions &options);

} // namespace ppsim
