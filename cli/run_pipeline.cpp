#include "cli/run_pipeline.h"

#include "remat/policy.h"
#include "sim/schedules/registry.h"

#include <algorithm>

namespace ppsim::cli {

PreparedRun prepare_policy_run(const ScenarioInput &input) {
  PreparedRun run = prepare_run(input);
  if (input.remat_policy != "none") {
    run.schedule = apply_remat_policy(run.scenario, run.schedule, input.remat_policy,
                                      IlpOptions{input.remat_time_limit_seconds, input.remat_relative_gap});
  }
  return run;
}

BoundsReport bounds_for_run(const ScenarioInput &input, const PreparedRun &run) {
  if (input.schedule_file.empty()) {
    BoundsOptions options = bounds_options_for(find_schedule(input.schedule), input.group_size);
    // A closed form describes the generator's own ops, not the schedule after recomputation.
    if (input.remat_policy != "none") options.schedule.clear();
    return compute_bounds(run.scenario, options);
  }
  const bool split = std::any_of(run.schedule.device_ops.begin(), run.schedule.device_ops.end(),
                                 [](const std::vector<Op> &ops) {
                                   return std::any_of(ops.begin(), ops.end(), [](const Op &op) {
                                     return op.kind() == OpKind::backward_weight;
                                   });
                                 });
  BoundsOptions options;
  options.backward = split ? BackwardForm::split : BackwardForm::fused;
  return compute_bounds(run.scenario, options);
}

} // namespace ppsim::cli
