#include "cli/run_pipeline.h"

#include "remat/partition.h"
#include "remat/policy.h"
#include "sim/error.h"
#include "sim/io/cost_file.h"
#include "sim/schedules/registry.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace ppsim::cli {

namespace {

// model.partition = "balanced" | "remat-aware": the cost file's layers are split by the partition
// DP (spec remat.md 8) for this schedule's in-flight counts and the device memory budget.
ScenarioInput with_partition(const ScenarioInput &input) {
  if (input.partition == "even") return input;
  if (input.costs_file.empty()) input.fail("model.partition", "needs model.costs_file, the per-layer costs to split");
  if (input.origins.count("model.layers_per_stage")) {
    input.fail("model.partition", "is given twice: model.layers_per_stage already splits the layers");
  }
  const ScheduleInfo *info = nullptr;
  try {
    info = &find_schedule(input.schedule);
  } catch (const Error &) {
    return input;  // prepare_run reports the unknown schedule with its location
  }
  if ((input.chunks > 0 ? input.chunks : info->default_chunks) != 1 || info->placement == PlacementKind::dual_pipe) {
    input.fail("model.partition", fmt::format("splits the layers into one stage per device; schedule '{}' "
                                              "places several on a device (give model.layers_per_stage)",
                                              input.schedule));
  }
  PartitionOptions options;
  options.stages = input.devices;
  options.schedule = input.schedule;
  options.in_flight = measured_in_flight(input);
  options.mode = input.partition == "balanced" ? PartitionMode::balanced : PartitionMode::remat_aware;
  if (input.cap_bytes) options.memory_limit_bytes = *input.cap_bytes;
  options.optimizer_shards = input.optimizer_shards;
  ScenarioInput split = input;
  try {
    split.layers_per_stage = partition_costs(read_cost_file(input.costs_file), options).layers_per_stage;
  } catch (const Error &error) {
    input.fail("model.partition", error.sentence());
  }
  return split;
}

} // namespace

// Microbatches each device holds at its peak under the input's schedule: the count-model peak
// (W frees the whole activation) of a run of the even split with no cap. It depends on the op
// order only, so it holds for the DP's split too; spec remat.md 7 gives it in closed form for
// four schedules (1F1B p - k, ZB-H1 p, ZB-H2 2p - 1, V-Half), this measures any schedule.
std::vector<int> measured_in_flight(const ScenarioInput &input) {
  ScenarioInput even = input;
  even.partition = "even";
  even.memory_model = MemoryModel::count;
  even.w_stash = 1;
  even.cap_activations.reset();
  even.cap_bytes.reset();
  const PreparedRun run = prepare_run(even);
  const Simulation simulation = simulate(run.scenario, run.schedule);
  std::vector<int> in_flight;
  for (const DeviceMetrics &device : simulation.metrics.devices) {
    in_flight.push_back(static_cast<int>(std::ceil(device.peak_activations - 1e-9)));
  }
  return in_flight;
}

PreparedRun prepare_policy_run(const ScenarioInput &input) {
  PreparedRun run = prepare_run(with_partition(input));
  if (input.remat_policy != "none") {
    PolicyRun applied = apply_remat_policy(run.input, run.scenario, run.schedule, input.remat_policy,
                                           IlpOptions{input.remat_time_limit_seconds, input.remat_relative_gap});
    run.scenario = std::move(applied.scenario);
    run.schedule = std::move(applied.schedule);
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
