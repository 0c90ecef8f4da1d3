#include "run/prepare.h"
#include "run/model_costs.h"
#include "base/index.h"
#include "costs/stage_sums.h"

#include "base/assert.h"
#include "base/error.h"
#include "remat/partition.h"
#include "run/policy.h"
#include "sim/engine.h"
#include "sim/io/torch_csv.h"
#include "sim/schedules/registry.h"
#include "sim/validate.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <optional>

namespace ppsim {
namespace {

// A cost file that measures the whole backward only (CostFile::fused_only) gives each stage's
// backward as B and W = 0; a schedule that runs B and W apart would silently lose W's deferral,
// so it is refused unless the scenario gives both B and W itself.
void check_backward_form(const RunInput &input, const CostFile *costs, bool splits,
                         const std::string &schedule) {
  if (!costs || !costs->fused_only() || !splits ||
      (input.origins.count("model.B") && input.origins.count("model.W")))
    return;
  input.fail("model.costs_file",
             fmt::format("{} has the whole backward only (bwd_total_ms: a trace recorded "
                         "without record_shapes=True); schedule '{}' runs B and W apart (record "
                         "with shapes, or pick a fused-backward schedule)",
                         costs->source_name, schedule));
}

// The scenario keeps the cost file's split: the checkpoint levels and the reports read it.
void record_split(const RunInput &input, Scenario &scenario) {
  if (!input.costs_files.empty())
    scenario.stage_layers = input.layers_per_stage;
}

// Consecutive layers per stage of a pipe: as given, split by cost for the placement (global stage
// -> device; model.partition = "cost", the default), or as even as possible (the first stages
// take one more layer when the count does not divide).
std::vector<int> stage_layer_counts(const RunInput &input, const CostFile &file,
                                    const std::vector<int> &placement, int pipes) {
  if (!input.layers_per_stage.empty())
    return input.layers_per_stage;
  const int stage_count = static_cast<int>(placement.size()) / pipes;
  try {
    if (input.partition == "cost")
      return cost_balanced_split(file, stage_count, placement).layers_per_stage;
    return even_layer_counts(file.rows.size(), stage_count);
  } catch (const Error &error) {
    input.fail("model.costs_file", error.sentence());
  }
}

// The stage sums of the file's layers split as the input says; a split the user wrote that does
// not fit the file is blamed on where it was written (model.partition or model.layers_per_stage),
// not on the cost file.
std::vector<StageCostSums> split_stages(const RunInput &input, const CostFile &file,
                                        const std::vector<int> &counts) {
  try {
    return aggregate_stages(file, counts);
  } catch (const Error &error) {
    if (input.layers_per_stage.empty())
      throw;
    const char *key =
        input.origins.count("model.partition") ? "model.partition" : "model.layers_per_stage";
    input.fail(key, fmt::format("{} ({})", error.sentence(), file.source_name));
  }
}

// Fills the per-stage costs and byte sizes from the cost file (docs/profiler.md, "The cost
// file"); fields the user set explicitly keep their values. The file describes the whole model,
// split into the stages of one pipe; a second pipe (DualPipe) holds a copy of every stage.
// `placement` is the device of every global stage.
RunInput with_cost_file(const RunInput &input, const CostFile *costs,
                             const std::vector<int> &placement, int pipes) {
  if (!costs)
    return input;
  const CostFile &file = *costs;
  const int stages_per_pipe = static_cast<int>(placement.size()) / pipes;
  const std::vector<int> counts = stage_layer_counts(input, file, placement, pipes);
  if (counts.size() != at(stages_per_pipe)) {
    const int devices = std::max(1, input.devices);
    input.fail("model.layers_per_stage",
               fmt::format("gives {} stages; schedule '{}' runs {}{}: give {} counts, or leave the "
                           "split to model.partition",
                           counts.size(), input.schedule, stages_per_pipe,
                           stages_per_pipe == devices * pipes
                               ? ""
                               : fmt::format(" ({} per device)", stages_per_pipe * pipes / devices),
                           stages_per_pipe));
  }
  const std::vector<StageCostSums> stages = split_stages(input, file, counts);
  RunInput filled = input;
  filled.layers_per_stage = counts; // the split used, printed by the commands
  filled.costs_per_device = false; // the sums are per stage already
  // Values the user gave beside the file keep their model.cost_unit: under "device" they are one
  // device's share, split over its chunks here as the builder splits them without a file
  // (docs/scenario.md, model.cost_unit); the boundary tensors and transient peaks keep their size.
  const int devices = *std::max_element(placement.begin(), placement.end()) + 1;
  const std::int64_t chunks = input.costs_per_device ? std::max(1, stages_per_pipe / devices) : 1;
  const auto device_share = [&](const char *key, auto &field) {
    if (chunks > 1 && input.origins.count(key)) {
      for (auto &value : field)
        value = value / chunks;
    }
  };
  device_share("model.F", filled.forward);
  device_share("model.B", filled.backward_input);
  device_share("model.W", filled.backward_weight);
  device_share("model.R", filled.recompute_forward);
  device_share("model.RW", filled.recompute_weight_inputs);
  device_share("model.RBW", filled.recompute_full_backward);
  device_share("model.R_selective", filled.recompute_selective);
  device_share("model.memory.act_bytes", filled.bytes.activation);
  device_share("model.memory.selective_act_bytes", filled.bytes.selective_activation);
  device_share("model.memory.kept_after_b", filled.bytes.kept_after_b);
  device_share("model.memory.kept_after_w", filled.bytes.kept_after_w);
  device_share("model.memory.weight_input_bytes", filled.bytes.weight_inputs);
  device_share("model.memory.param_bytes", filled.bytes.parameters);
  device_share("model.memory.grad_bytes", filled.bytes.gradients);
  device_share("model.memory.optimizer_bytes", filled.bytes.optimizer);
  const auto fill = [&](const char *key, auto &field, auto value_of) {
    if (input.origins.count(key))
      return;
    field.clear();
    for (int pipe = 0; pipe < pipes; ++pipe) {
      for (const StageCostSums &stage : stages)
        field.push_back(value_of(stage));
    }
  };
  fill("model.F", filled.forward, [](const StageCostSums &c) { return c.forward_ms; });
  fill("model.B", filled.backward_input,
       [](const StageCostSums &c) { return c.backward_input_ms; });
  fill("model.W", filled.backward_weight,
       [](const StageCostSums &c) { return c.backward_weight_ms; });
  fill("model.R", filled.recompute_forward, [](const StageCostSums &c) { return c.recompute_ms; });
  fill("model.R_selective", filled.recompute_selective,
       [](const StageCostSums &c) { return c.recompute_selective_ms; });
  ByteSizesInput &bytes = filled.bytes;
  // A byte size comes from the file only where the file has its column: one without them (a
  // trace recorded without profile_memory) leaves the sizes as without a file (the count
  // model's one activation per stage and microbatch), not zeros.
  const auto measured_fill = [&](const char *key, std::vector<double> &field,
                                 std::initializer_list<std::string_view> columns, auto value_of) {
    if (std::any_of(columns.begin(), columns.end(),
                    [&](std::string_view column) { return file.has_column(column); }))
      fill(key, field, value_of);
  };
  measured_fill("model.memory.act_bytes", bytes.activation, {"activation_bytes_full"},
                [](const StageCostSums &c) { return c.activation_bytes_full; });
  measured_fill("model.memory.selective_act_bytes", bytes.selective_activation,
                {"activation_bytes_selective"},
                [](const StageCostSums &c) { return c.activation_bytes_selective; });
  measured_fill("model.memory.kept_after_b", bytes.kept_after_b, {"bwd_w_stash_bytes"},
                [](const StageCostSums &c) { return c.bwd_w_stash_bytes; });
  measured_fill("model.memory.weight_input_bytes", bytes.weight_inputs, {"bwd_w_act_bytes"},
                [](const StageCostSums &c) { return c.bwd_w_act_bytes; });
  measured_fill("model.memory.ckpt_bytes", bytes.checkpoint, {"input_bytes", "output_bytes"},
                [](const StageCostSums &c) { return c.input_bytes + c.output_bytes; });
  measured_fill("model.memory.param_bytes", bytes.parameters, {"param_bytes"},
                [](const StageCostSums &c) { return c.param_bytes; });
  // grad_bytes defaults to param_bytes in the file (complete_row).
  measured_fill("model.memory.grad_bytes", bytes.gradients, {"grad_bytes", "param_bytes"},
                [](const StageCostSums &c) { return c.grad_bytes; });
  measured_fill("model.memory.optimizer_bytes", bytes.optimizer, {"optimizer_state_bytes"},
                [](const StageCostSums &c) { return c.optimizer_state_bytes; });
  measured_fill("model.memory.peak_f", bytes.peak_forward, {"fwd_peak_temp_bytes"},
                [](const StageCostSums &c) { return c.fwd_peak_temp_bytes; });
  measured_fill("model.memory.peak_b", bytes.peak_backward_input, {"bwd_input_peak_temp_bytes"},
                [](const StageCostSums &c) { return c.bwd_input_peak_temp_bytes; });
  measured_fill("model.memory.peak_w", bytes.peak_backward_weight, {"bwd_weight_peak_temp_bytes"},
                [](const StageCostSums &c) { return c.bwd_weight_peak_temp_bytes; });
  measured_fill("model.memory.peak_ckpt", bytes.peak_checkpoint, {"fwd_peak_temp_bytes"},
                [](const StageCostSums &c) { return c.fwd_peak_temp_bytes; });
  measured_fill("model.memory.out_bytes", bytes.output, {"output_bytes"},
                [](const StageCostSums &c) { return c.output_bytes; });
  if (!input.origins.count("model.time_unit"))
    filled.time_unit = "ms"; // the cost file's unit
  return filled;
}

PreparedRun import_run(const RunInput &input) {
  if (input.partition == "balanced" || input.partition == "remat-aware") {
    input.fail("model.partition",
               "splits the layers for a generated schedule; with a schedule file give "
               "model.layers_per_stage");
  }
  ImportedSchedule imported = read_torch_csv(input.schedule_file);
  const std::shared_ptr<const CostFile> costs = run_costs(input);
  const bool splits = std::any_of(
      imported.schedule.device_ops.begin(), imported.schedule.device_ops.end(),
      [](const std::vector<Op> &ops) {
        return std::any_of(ops.begin(), ops.end(),
                           [](const Op &op) { return op.kind() == OpKind::backward_input; });
      });
  check_backward_form(input, costs.get(), splits, input.schedule_file);
  RunInput adjusted = with_cost_file(input, costs.get(), imported.placement, 1);
  adjusted.devices = imported.schedule.device_count();
  if (input.origins.count("cluster.devices") && input.devices != adjusted.devices) {
    input.fail("cluster.devices", fmt::format("the schedule file has {} device rows, not {}",
                                              adjusted.devices, input.devices));
  }
  // m is 1 + the largest microbatch id unless the user gave it (docs/scenario.md, "PyTorch CSV
  // schedules"). Then every stage must run a forward of every id below it; if one does not, the
  // cell that set m is the likely culprit (ids numbered from 1, say), not the op that seems
  // missing.
  if (!input.origins.count("pipeline.microbatches")) {
    adjusted.microbatches = imported.microbatches;
    // Before the tables below, sized stages x m: a cell naming microbatch 2e9 is one line.
    try {
      check_run_size(adjusted, static_cast<std::int64_t>(imported.placement.size()),
                     imported.microbatches);
    } catch (const Error &error) {
      throw Error(input.schedule_file, imported.largest_microbatch_at.first, "",
                  fmt::format("action '{}' sets m = {} (1 + the largest microbatch id): {}",
                              imported.largest_microbatch_at.second, imported.microbatches,
                              error.sentence()));
    }
    std::vector<std::vector<char>> seen(imported.placement.size(),
                                        std::vector<char>(at(imported.microbatches), 0));
    for (const auto &ops : imported.schedule.device_ops) {
      for (const Op &op : ops) {
        for (int part = 0; part < op.sub_op_count(); ++part) {
          const OpRef ref = op.sub_op(part);
          if (ref.kind == OpKind::forward)
            seen[at(ref.stage)][at(ref.microbatch)] = 1;
        }
      }
    }
    for (std::size_t stage = 0; stage < seen.size(); ++stage) {
      const auto missing = std::find(seen[stage].begin(), seen[stage].end(), 0);
      if (missing == seen[stage].end())
        continue;
      const auto &[line, cell] = imported.largest_microbatch_at;
      throw Error(
          input.schedule_file, line, "",
          fmt::format(
              "action '{}' sets m = {} (1 + the largest microbatch id), but stage {} has no "
              "forward of microbatch {}; number microbatches from 0, or give -m",
              cell, imported.microbatches, stage, missing - seen[stage].begin()));
    }
  }
  PreparedRun run;
  run.input = adjusted;
  run.scenario = build_scenario_on(adjusted, imported.placement, imported.chunks, 1);
  record_split(adjusted, run.scenario);
  run.schedule = std::move(imported.schedule);
  if (imported.older_vocabulary) {
    run.warnings.push_back(
        "read PyTorch's older action names: B is the input gradient, BW the full backward");
  }
  if (!imported.dropped.empty()) {
    run.warnings.push_back(
        fmt::format("ignored non-compute actions: {}", fmt::join(imported.dropped, ", ")));
  }
  run.locator = std::make_shared<const OpLocator>(
      validate_schedule(run.scenario, run.schedule, ScheduleOrigin{input.schedule_file, 1}));
  return run;
}

const ScheduleInfo &schedule_of(const RunInput &input) {
  try {
    return find_schedule(input.schedule);
  } catch (const Error &error) {
    input.fail("pipeline.schedule", error.sentence());
  }
}

// The device of every global stage of the schedule (build_scenario checks p and v afterwards).
std::vector<int> placement_of(const RunInput &input, const ScheduleInfo &info) {
  return make_placement(info.placement, std::max(1, input.devices),
                        std::max(1, info.chunks(input.chunks)));
}

// The count-model peak of a run of the even split with no cap (W frees the whole activation).
// It depends on the op order only, so it holds for any split; docs/partition.md gives it in
// closed form for four schedules (1F1B p - k, ZB-H1 p, ZB-H2 2p - 1, V-Half), this measures any.
std::vector<int> in_flight_of(const RunInput &input, const ScheduleInfo &info,
                              const CostFile *costs) {
  RunInput even = input;
  even.partition = "even";
  even.memory_model = MemoryModel::count;
  even.w_stash = 1;
  even.cap_activations.reset();
  even.budget_bytes.reset();
  const RunInput costed = with_cost_file(even, costs, placement_of(even, info), info.pipes());
  const Scenario scenario = build_scenario(costed, info);
  const Simulation simulation =
      simulate(scenario, generate_schedule(info, scenario, GeneratorOptions{input.group_size}));
  std::vector<int> in_flight;
  for (const DeviceMetrics &device : simulation.metrics.devices) {
    in_flight.push_back(static_cast<int>(std::ceil(device.peak_activations - 1e-9)));
  }
  return in_flight;
}

// model.partition = "balanced" | "remat-aware": the cost file's layers split by the partition DP
// (docs/partition.md) for this schedule's in-flight counts and the device memory budget.
std::vector<int> partitioned_layers(const RunInput &input, const ScheduleInfo &info,
                                    const CostFile *costs) {
  if (!costs)
    input.fail("model.partition", "needs model.costs_file, the per-layer costs to split");
  if (input.origins.count("model.layers_per_stage")) {
    input.fail("model.partition",
               "is given twice: model.layers_per_stage already splits the layers");
  }
  if (!info.one_stage_per_device(input.chunks)) {
    input.fail("model.partition",
               fmt::format("splits the layers into one stage per device; schedule '{}' "
                           "places several on a device (give model.layers_per_stage)",
                           input.schedule));
  }
  PartitionOptions options;
  options.stages = input.devices;
  options.schedule = input.schedule;
  options.in_flight = in_flight_of(input, info, costs);
  options.mode =
      input.partition == "balanced" ? PartitionMode::balanced : PartitionMode::remat_aware;
  if (input.budget_bytes) // what the runtime holds is not the model's to use
    options.budget_bytes = *input.budget_bytes - input.runtime_bytes;
  options.optimizer_shards = input.optimizer_shards;
  try {
    return partition_costs(*costs, options).layers_per_stage;
  } catch (const Error &error) {
    input.fail("model.partition", error.sentence());
  }
}

} // namespace

PreparedRun prepare_run(const RunInput &input) {
  if (!input.schedule_file.empty() && input.origins.count("pipeline.schedule")) {
    // Both name the order to run: refuse rather than let one win silently.
    input.fail("pipeline.schedule_file",
               fmt::format("a schedule file and a schedule ('{}') are both given; keep one",
                           input.schedule));
  }
  if (!input.schedule_file.empty())
    return import_run(input);
  PreparedRun run = prepare_scenario(input, RunSize::orders);
  run.schedule =
      generate_schedule(schedule_of(input), run.scenario, GeneratorOptions{input.group_size});
  run.locator = std::make_shared<const OpLocator>(validate_schedule(run.scenario, run.schedule));
  return run;
}

PreparedRun prepare_scenario(const RunInput &input, RunSize size) {
  const ScheduleInfo &info = schedule_of(input);
  const std::shared_ptr<const CostFile> costs = run_costs(input);
  check_backward_form(input, costs.get(), info.split_backward, info.name);
  RunInput split = input;
  if (input.partition == "balanced" || input.partition == "remat-aware")
    split.layers_per_stage = partitioned_layers(input, info, costs.get());
  PreparedRun run;
  run.input = with_cost_file(split, costs.get(), placement_of(input, info), info.pipes());
  run.scenario = build_scenario(run.input, info, size);
  record_split(run.input, run.scenario);
  // Parameters outside the generator's definition are refused as generating would refuse them.
  if (std::optional<Error> refusal =
          info.refusal(run.scenario, GeneratorOptions{input.group_size}))
    throw *refusal;
  run.schedule.name = info.name; // no ops yet
  return run;
}

PreparedRun prepare_policy_run(const RunInput &input) {
  return with_remat_policy(prepare_run(input), input.remat_policy);
}

PreparedRun with_remat_policy(PreparedRun run, const std::string &policy) {
  PPSIM_ASSERT(!run.replaced_schedule); // prepared without recomputation
  if (policy != "none") {
    PolicyRun applied = apply_remat_policy(
        run.input, run.scenario, run.schedule, policy,
        ilp_options(run.input));
    run.scenario = std::move(applied.scenario);
    run.replaced_schedule = std::move(run.schedule);
    run.schedule = std::move(applied.schedule);
    run.locator.reset();
    run.remat_status = std::move(applied.status);
  }
  run.input.remat_policy = policy;
  return run;
}

std::vector<int> measured_in_flight(const RunInput &input) {
  return in_flight_of(input, schedule_of(input), run_costs(input).get());
}

BackwardForm backward_form(const PreparedRun &run) {
  const RunInput &input = run.input;
  if (input.schedule_file.empty())
    return find_schedule(input.schedule).split_backward ? BackwardForm::split : BackwardForm::full;
  const bool split = std::any_of(run.schedule.device_ops.begin(), run.schedule.device_ops.end(),
                                 [](const std::vector<Op> &ops) {
                                   return std::any_of(ops.begin(), ops.end(), [](const Op &op) {
                                     return op.kind() == OpKind::backward_weight;
                                   });
                                 });
  return split ? BackwardForm::split : BackwardForm::full;
}

BoundsReport bounds_for_run(const PreparedRun &run) {
  const RunInput &input = run.input;
  if (input.schedule_file.empty()) {
    BoundsOptions options = bounds_options_for(find_schedule(input.schedule), input.group_size);
    // A closed form describes the generator's own ops, not the schedule after recomputation.
    if (input.remat_policy != "none")
      options.schedule.clear();
    return compute_bounds(run.scenario, options);
  }
  BoundsOptions options;
  options.backward = backward_form(run);
  return compute_bounds(run.scenario, options);
}

PreparedRun prepare_for_bounds(const RunInput &input, bool with_schedule) {
  const bool needs_schedule =
      with_schedule || !input.schedule_file.empty() || input.remat_policy != "none";
  return needs_schedule ? prepare_policy_run(input) : prepare_scenario(input, RunSize::scenario);
}

void refuse_chosen_recomputation(const RunInput &input, std::string_view command,
                                 bool searches) {
  const bool given = input.origins.count("remat.policy") > 0;
  if (input.remat_policy != "none" || (given && !searches))
    input.fail("remat.policy",
               fmt::format("{} chooses the recomputation of each (stage, microbatch) itself{}",
                           command,
                           searches ? "; give --remat none to search orders without it" : ""));
  if (input.remat_checkpoint_levels == 0)
    return;
  if (!searches)
    input.fail("remat.checkpoint_levels",
               fmt::format("{} recomputes whole stages (R, RW, RBW), not checkpoint levels; "
                           "`ppsim compare` ranks plans with levels",
                           command));
  if (given)
    input.fail("remat.checkpoint_levels",
               "checkpoint levels are recomputation, which --remat none leaves out");
}

void refuse_recomputation(const RunInput &input, std::string_view command) {
  const std::string why = fmt::format("{} searches orders without recomputation; `ppsim compare` "
                                      "ranks schedules with recomputation plans",
                                      command);
  if (input.remat_policy != "none")
    input.fail("remat.policy", why);
  if (input.remat_checkpoint_levels > 0)
    input.fail("remat.checkpoint_levels", why);
}

} // namespace ppsim
