#pragma once
// The StageRemat ILP's model (docs/remat.md, "The ILP (ppsim form)"; reference: ELF,
// topal-team/elf `elf/scheduling/ilp.py`, and HAL hal-05151601): the binaries x (R), y (RW) and
// z (RBW) per (stage, microbatch), an end time per op of the base order with explicit recompute
// slots, the engine's dependency edges, sequential execution per device and the memory rows of
// the engine's own memory model. Solving and decoding are in remat/stage_remat_ilp.h.
#include "remat/plan.h"
#include "sim/metrics.h"
#include "sim/scenario.h"
#include "sim/schedule.h"
#include "solver/milp.h"

#include <chrono>
#include <optional>
#include <vector>

namespace ppsim {

/// What the model minimises, read on a replay: the iteration where the scenario ends one
/// (docs/model.md, "The iteration's end"), else the slowest device's span.
inline Ticks replayed_objective(const Metrics &metrics) {
  return metrics.iteration.value_or(metrics.max_span);
}

/// The MILP and where its decision variables are (index -1: the option does not exist).
struct StageRematModel {
  solver::Model model;
  /// The binary of each option, indexed by option_key(s, j, choice) (remat/option_model.h):
  /// x, y and z (y and z for a split backward only), and one per checkpoint level of the stage.
  std::vector<int> option_variable;
  /// Tmax, in time units: the slowest rank's span, or with the iteration's end the iteration
  /// (replayed_objective).
  int span_variable = -1;
  int peak_variable = -1;         ///< the least-peak model's objective, in caps
  double ticks_per_time_unit = 1; ///< times are scaled to keep the matrix balanced
  /// False when some rank's first op could not be pinned (docs/remat.md, "The ILP (ppsim form)"):
  /// the objective is then only a bound on the replay, which is reported separately.
  bool first_ops_pinned = true;

  /// The plan encoded by a solution's values.
  [[nodiscard]] RematPlan plan_from(const std::vector<double> &values, int stages,
                                    int microbatches) const;
};

/// Which formulation (docs/remat.md, "The ILP (ppsim form)" and "The reference formulation").
enum class IlpForm {
  ppsim, ///< the ppsim form: first ops pinned, explicit R slots timed as the scenario says, the
         ///< engine's split memory accounting: the replayed span equals the objective
  elf    ///< the reference form, ELF's `ilp.py`, for cross-checking: no pinning, recomputation
         ///< lumped into B and W (lumped timing), full BW rewritten as adjacent B and W, the
         ///< reference's lumped transient peaks (not the engine's: its plans may replay over
         ///< the cap)
};

/// The scenario and base schedule a form solves and replays: for `elf`, lumped timing and every
/// BW split into adjacent B, W (docs/remat.md, "The ILP (ppsim form)"); for `ppsim`, the inputs
/// unchanged.
struct FormInstance {
  Scenario scenario;
  Schedule base;
};
FormInstance form_instance(const Scenario &scenario, const Schedule &base, IlpForm form);

/// Builds the model for `base` (no R/RW/RBW yet) under the cap of capped_track(scenario), in the
/// given form (pass the form_instance for `elf`). Every transfer is a fixed delay: with link
/// contention or blocking sends the model is a relaxation of the engine's timing (docs/remat.md,
/// "The ILP (ppsim form)"). Throws Error for schedules the formulation cannot express
/// (overlapped ops) and when no cap is set.
StageRematModel build_stage_remat_model(const Scenario &scenario, const Schedule &base,
                                        IlpForm form = IlpForm::ppsim);

/// The least-peak model: the same options and memory rows, no times, minimise the largest
/// device peak (in units of the cap). The least memory any plan reaches, in the form's own
/// accounting.
StageRematModel build_minimum_peak_model(const Scenario &scenario, const Schedule &base,
                                         IlpForm form = IlpForm::ppsim);

/// Throws Error when the model of `base` would exceed the ILP's size limit (2^25 matrix entries,
/// docs/reliability.md), counted from the schedule without building anything.
void check_stage_remat_size(const Scenario &scenario, const Schedule &base,
                            IlpForm form = IlpForm::ppsim);

/// The model (the least-peak one when `least_peak`) built until `deadline`: nullopt when the time
/// ran out first, so that a time limit bounds building too (docs/remat.md).
std::optional<StageRematModel>
build_stage_remat_model_until(const Scenario &scenario, const Schedule &base, IlpForm form,
                              bool least_peak, std::chrono::steady_clock::time_point deadline);

} // namespace ppsim
