#include "run/evaluate.h"

namespace ppsim {
namespace {

Evaluation evaluate_prepared(PreparedRun run, const EvaluateOptions &options) {
  Evaluation evaluation{std::move(run), {}, std::nullopt};
  const PreparedRun &prepared = evaluation.run;
  const SimulateOptions simulate_options{options.timelines};
  evaluation.simulation =
      prepared.locator ? simulate_validated(prepared.scenario, prepared.schedule,
                                            prepared.locator, simulate_options)
                       : simulate(prepared.scenario, prepared.schedule, simulate_options);
  if (evaluation.fits())
    evaluation.bounds = bounds_for_run(evaluation.run);
  return evaluation;
}

} // namespace

std::optional<Ticks> Evaluation::lower_bound() const {
  if (!bounds)
    return std::nullopt;
  return bounds->best_lower_bound;
}

Rational Evaluation::makespan() const {
  return run.scenario.time_scale.exact_units(simulation.metrics.makespan);
}

Ticks Evaluation::ranked_ticks() const {
  return simulation.metrics.iteration.value_or(simulation.metrics.makespan);
}

Rational Evaluation::ranked_time() const {
  return run.scenario.time_scale.exact_units(ranked_ticks());
}

std::optional<Ticks> Evaluation::ranked_bound() const {
  const std::optional<Ticks> bound = lower_bound();
  if (!bound || !simulation.metrics.iteration)
    return bound;
  return iteration_lower_bound(run.scenario, *bound);
}

SimulationReport Evaluation::report() const {
  return SimulationReport{run.scenario, run.schedule, simulation, lower_bound(), run.warnings};
}

Evaluation evaluate_run(const RunInput &input, const EvaluateOptions &options) {
  return evaluate_prepared(prepare_policy_run(input), options);
}

Evaluation evaluate_policy(const PreparedRun &prepared, const std::string &policy,
                           const EvaluateOptions &options) {
  return evaluate_prepared(with_remat_policy(prepared, policy), options);
}

} // namespace ppsim
