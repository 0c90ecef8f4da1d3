#pragma once
// One run end to end (docs/architecture.md, "One run"): prepared with its recomputation policy,
// simulated, and bounded where the bounds hold. simulate, sweep and compare (with report and
// remat --auto) evaluate their runs here, so one (schedule, policy) has one makespan everywhere.
#include "run/prepare.h"
#include "sim/engine.h"
#include "sim/io/report.h"

#include <optional>

namespace ppsim {

struct Evaluation {
  PreparedRun run;
  Simulation simulation;
  /// Only for a run within its memory cap: the bounds of docs/bounds.md assume the cap holds.
  std::optional<BoundsReport> bounds;

  [[nodiscard]] bool fits() const { return simulation.metrics.feasible; }
  /// The best lower bound, when the run has bounds.
  [[nodiscard]] std::optional<Ticks> lower_bound() const;
  /// The makespan in time units, exact: runs of different schedules have different tick scales.
  [[nodiscard]] Rational makespan() const;
  /// What a ranking orders runs by, in ticks: the iteration where the scenario ends one
  /// (docs/model.md, "The iteration's end": the optimizer step and the all-reduce after the
  /// pipeline differ per device, so the fastest pipeline need not end the fastest iteration),
  /// else the makespan.
  [[nodiscard]] Ticks ranked_ticks() const;
  /// ranked_ticks in time units, exact.
  [[nodiscard]] Rational ranked_time() const;
  /// The best lower bound on ranked_ticks, when the run has bounds.
  [[nodiscard]] std::optional<Ticks> ranked_bound() const;
  /// What the report writers (text, JSON, CSV, HTML) print of the run.
  [[nodiscard]] SimulationReport report() const;
};

struct EvaluateOptions {
  bool timelines = false; ///< keep the memory timelines and transfers (charts, traces, reports)
};

/// prepare_policy_run, simulate, bounds_for_run when the run fits. Throws Error as prepare does.
Evaluation evaluate_run(const RunInput &input, const EvaluateOptions &options = {});

/// The same for a run prepared without recomputation, with `policy` applied to its base schedule
/// (with_remat_policy): a ranking prepares each schedule once for all its policies.
Evaluation evaluate_policy(const PreparedRun &prepared, const std::string &policy,
                           const EvaluateOptions &options = {});

} // namespace ppsim
