#pragma once
// The StageRemat ILP, ppsim form (docs/remat.md, "The ILP (ppsim form)"; reference: ELF,
// topal-team/elf
// `elf/scheduling/ilp.py`, and HAL hal-05151601): for a fixed base schedule, choose per
// (stage, microbatch) forward remat x (R), backward activation remat y (RW) and full backward
// remat z (RBW) so that every device's memory stays under the budget and the slowest device
// span is minimal. Recompute ops have explicit positions (R right before B/BW, RW/RBW right
// before W), each rank's first op is pinned to its ASAP time, and memory increments are those
// of the engine's memory model, so the replayed span equals the ILP objective.
#include "base/error.h"
#include "remat/plan.h"
#include "sim/metrics.h"
#include "solver/milp.h"

#include <string>
#include <vector>

namespace ppsim {

/// The budget is below the least peak any plan of the schedule reaches: no remat plan fits. An
/// Error like any other for the user; what ranks schedules tells it apart from a failure.
class BudgetUnreachable : public Error {
public:
  using Error::Error;
};

/// The MILP and where its decision variables are (index -1: the option does not exist).
struct StageRematModel {
  solver::Model model;
  /// The binary of each option, indexed by option_key(s, j, choice) (remat/option_model.h):
  /// x, y and z (y and z for a split backward only), and one per checkpoint level of the stage.
  std::vector<int> option_variable;
  int span_variable = -1;         ///< Tmax, in time units
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
         ///< lumped into B and W (lumped timing), unsplit BW rewritten as adjacent B and W, the
         ///< reference's lumped transient peaks (not the engine's: its plans may replay over
         ///< the budget)
};

/// The scenario and base schedule a form solves and replays: for `elf`, lumped timing and every
/// BW split into adjacent B, W (docs/remat.md, "The ILP (ppsim form)"); for `ppsim`, the inputs
/// unchanged.
struct FormInstance {
  Scenario scenario;
  Schedule base;
};
FormInstance form_instance(const Scenario &scenario, const Schedule &base, IlpForm form);

/// Builds the model for `base` (no R/RW/RBW yet) under the cap of budget_track(scenario), in the
/// given form (pass the form_instance for `elf`). Throws Error for schedules the formulation
/// cannot express (overlapped ops, link contention or blocking sends) and when no budget is set.
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

struct IlpOptions {
  double time_limit_seconds = 60; ///< bounds the whole solve_stage_remat call
  double relative_gap = 0.03;
  IlpForm form = IlpForm::ppsim;
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

  /// A plan was found (optimal, or the best one when the time limit stopped the proof).
  [[nodiscard]] bool found() const {
    return status == solver::Status::optimal || status == solver::Status::feasible;
  }
};

/// Solves the ILP and replays the chosen plan, within options.time_limit_seconds in all. The
/// search starts from the greedy plan (or the least-peak plan), so a time limit returns the
/// best plan so far with its proven bound. Throws Error "cannot fit schedule 'X' within budget
/// Y; the least peak any remat plan reaches is Z" when no plan fits the budget (a user error);
/// when the solver process dies, or the limit ends before any plan, returns a solution that is
/// not found() and says why in `failure`.
RematSolution solve_stage_remat(const Scenario &scenario, const Schedule &base,
                                const IlpOptions &options);

/// "2.5" in the count unit, "1 GiB" in the byte model: how budgets are printed.
std::string format_budget(const Scenario &scenario, double amount);

} // namespace ppsim
