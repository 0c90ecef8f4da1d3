#include "remat/stage_checkpoint.h"
#include "base/index.h"

#include "base/assert.h"
#include "base/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ppsim {
namespace {

std::int64_t whole_bytes(double bytes) {
  return static_cast<std::int64_t>(std::ceil(std::max(0.0, bytes)));
}

// Replays `sequence` on the byte chain: exact times and bytes, and each layer's first forward.
CheckpointOption option_of(const rotor::Chain &bytes, const std::vector<rotor::Op> &sequence,
                           double budget) {
  const rotor::Replay replayed = rotor::replay(bytes, sequence);
  CheckpointOption option{budget,
                          replayed.forward_time,
                          replayed.backward_time,
                          static_cast<double>(replayed.kept_at_loss),
                          static_cast<double>(replayed.peak),
                          std::vector<LayerAction>(at(bytes.length()), LayerAction::recompute)};
  for (const rotor::Op &op : sequence) {
    if (op.kind == rotor::OpKind::loss)
      break;
    LayerAction &action = option.actions[at(op.layer)];
    switch (op.kind) {
    case rotor::OpKind::forward_record:
      action = op.option == 0 ? LayerAction::store : LayerAction::store_selective;
      break;
    case rotor::OpKind::forward_checkpoint:
      action = LayerAction::checkpoint;
      break;
    default:
      action = LayerAction::recompute;
      break;
    }
  }
  return option;
}

} // namespace

rotor::Chain stage_chain(const std::vector<CostRow> &layers, bool selective) {
  PPSIM_ASSERT(!layers.empty());
  std::vector<rotor::MultiLayerArrays> arrays;
  std::vector<std::int64_t> sizes; // cw: each layer's input, then the stage output
  for (const CostRow &row : layers) {
    sizes.push_back(whole_bytes(row.input_bytes));
    const double backward = row.bwd_total_ms.numerator != 0
                                ? to_double(row.bwd_total_ms)
                                : to_double(row.bwd_input_ms) + to_double(row.bwd_weight_ms);
    const std::int64_t backward_peak =
        whole_bytes(std::max(row.bwd_input_peak_temp_bytes, row.bwd_weight_peak_temp_bytes));
    rotor::MultiLayerArrays layer;
    layer.nograd_forward_time =
        row.recompute_ms.numerator != 0 ? to_double(row.recompute_ms) : to_double(row.fwd_ms);
    layer.nograd_forward_peak =
        whole_bytes(row.recompute_peak_temp_bytes > 0 ? row.recompute_peak_temp_bytes
                                                      : row.fwd_peak_temp_bytes);
    const std::int64_t full =
        std::max(whole_bytes(row.activation_bytes_full), whole_bytes(row.output_bytes));
    layer.options.push_back({to_double(row.fwd_ms), backward, full,
                             whole_bytes(row.fwd_peak_temp_bytes), backward_peak});
    if (selective && row.activation_bytes_selective > 0 &&
        row.activation_bytes_selective < row.activation_bytes_full) {
      const std::int64_t kept =
          std::max(whole_bytes(row.activation_bytes_selective), whole_bytes(row.output_bytes));
      layer.options.push_back({to_double(row.fwd_ms),
                               backward + to_double(row.recompute_selective_ms), kept,
                               whole_bytes(row.fwd_peak_temp_bytes), backward_peak});
    }
    arrays.push_back(std::move(layer));
  }
  sizes.push_back(whole_bytes(layers.back().output_bytes));
  return rotor::multi_option_chain(arrays, sizes, 0);
}

CheckpointOption store_everything(const std::vector<CostRow> &layers) {
  const rotor::Chain chain = stage_chain(layers, false);
  std::vector<rotor::Op> sequence;
  const int n = chain.length();
  for (int l = 0; l < n; ++l)
    sequence.push_back({rotor::OpKind::forward_record, l, 0});
  sequence.push_back({rotor::OpKind::loss, n, 0});
  for (int l = n - 1; l >= 0; --l)
    sequence.push_back({rotor::OpKind::backward, l, 0});
  CheckpointOption option = option_of(chain, sequence, 0);
  option.budget_bytes = option.peak_bytes;
  return option;
}

std::vector<CheckpointOption> checkpoint_front(const std::vector<CostRow> &layers,
                                               double max_budget_bytes, int slots, bool selective) {
  PPSIM_ASSERT(max_budget_bytes > 0 && slots > 0);
  const rotor::Chain bytes = stage_chain(layers, selective);
  const rotor::Chain discrete = rotor::discretize(bytes, max_budget_bytes, slots);
  const double slot_bytes = max_budget_bytes / slots;
  const rotor::Table table(discrete, slots);
  std::vector<CheckpointOption> front;
  for (std::int64_t budget = slots; budget >= 0; --budget) {
    if (table.time(budget) == rotor::kInfeasible)
      break;
    CheckpointOption option =
        option_of(bytes, table.sequence(budget), static_cast<double>(budget) * slot_bytes);
    // The DP's memory rule (the rotor paper's) is not the byte replay's in every case (a
    // selective record's transients): a level keeps only plans whose replay fits it.
    if (option.peak_bytes > option.budget_bytes)
      continue;
    // Less memory can only cost time; keep one option per distinct time, the least memory each.
    const auto total = [](const CheckpointOption &o) { return o.forward_ms + o.backward_ms; };
    if (!front.empty() && total(option) <= total(front.back()) * (1 + 1e-12))
      front.back() = std::move(option);
    else
      front.push_back(std::move(option));
  }
  return front;
}

std::vector<CheckpointOption> checkpoint_levels(const std::vector<CostRow> &layers, int count,
                                                int slots) {
  const CheckpointOption whole = store_everything(layers);
  // From above storing everything (the DP's memory rule reserves more than the replay needs).
  std::vector<CheckpointOption> front =
      checkpoint_front(layers, 1.5 * whole.peak_bytes, slots, true);
  // A level must keep less than storing everything, in the chain's count and in the stage's
  // record (the sum of activation_bytes_full, what the pipeline stores): the chain also counts
  // the stage's input, so a level can keep less than the chain's whole and no less than the
  // record (a stage ending in the LM head's logits).
  double record = 0;
  for (const CostRow &row : layers)
    record += row.activation_bytes_full;
  std::erase_if(front, [&](const CheckpointOption &o) {
    return !(o.kept_bytes < whole.kept_bytes) || !(o.kept_bytes < record);
  });
  if (count <= 0 || static_cast<int>(front.size()) <= count)
    return count <= 0 ? std::vector<CheckpointOption>{} : front;
  std::vector<CheckpointOption> spread;
  const auto last = static_cast<double>(front.size() - 1);
  for (int k = 0; k < count; ++k) {
    const auto index = count == 1 ? front.size() - 1 : at(std::lround(last * k / (count - 1)));
    spread.push_back(front[index]);
  }
  return spread;
}

Scenario with_checkpoint_levels(const Scenario &scenario,
                                const std::vector<std::vector<CostRow>> &stage_layers, int count,
                                double ticks_per_ms) {
  PPSIM_ASSERT(!stage_layers.empty() && count <= kMaxCheckpointLevels);
  Scenario leveled = scenario;
  for (int s = 0; s < leveled.stage_count(); ++s) {
    const std::vector<CostRow> &layers = stage_layers[at(s) % stage_layers.size()];
    const CheckpointOption whole = store_everything(layers);
    if (!(whole.peak_bytes > 0) || !leveled.bytes)
      throw Error(
          fmt::format("stage {} has no activation sizes (input_bytes, activation_bytes_full): no "
                      "checkpoint levels",
                      s));
    const auto stage = at(s);
    StageCosts &costs = leveled.stage_costs[stage];
    StageMemory &bytes = leveled.bytes->stages[stage];
    StageMemory &units = leveled.activations.stages[stage];
    const double units_per_byte = bytes.stored > 0 ? units.stored / bytes.stored : 0.0;
    for (const CheckpointOption &level : checkpoint_levels(layers, count)) {
      // The whole time the level adds: the rotor runs a checkpointed layer's forward without
      // recording (recompute_ms) and records it in the backward (fwd_ms), where PyTorch's
      // checkpoint records nothing in a full-cost forward and recomputes in the backward; the
      // stage's F stays as it is, so the R takes the sum's difference, not only the backward's.
      const double added = level.forward_ms + level.backward_ms - whole.forward_ms -
                           whole.backward_ms;
      costs.checkpoint_level_recompute.push_back(
          Ticks{std::llround(std::max(0.0, added) * ticks_per_ms)});
      bytes.checkpoint_levels.push_back({level.kept_bytes, level.peak_bytes});
      units.checkpoint_levels.push_back(
          {level.kept_bytes * units_per_byte, level.peak_bytes * units_per_byte});
    }
  }
  return leveled;
}

} // namespace ppsim
