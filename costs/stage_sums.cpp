#include "costs/stage_sums.h"
#include "base/index.h"

#include "base/error.h"

#include <algorithm>
#include <fmt/format.h>

namespace ppsim {

double resident_state_bytes(double param_bytes, double grad_bytes, double optimizer_state_bytes,
                            int optimizer_shards) {
  return param_bytes + grad_bytes + optimizer_state_bytes / optimizer_shards;
}

void require_layer_per_stage(std::size_t layers, int stages) {
  if (stages < 1 || layers < at(stages)) {
    throw Error(
        fmt::format("the cost file has {} layers, fewer than the {} stages", layers, stages));
  }
}

std::vector<int> even_layer_counts(std::size_t layers, int stages) {
  require_layer_per_stage(layers, stages);
  std::vector<int> counts(at(stages), static_cast<int>(layers / at(stages)));
  for (std::size_t s = 0; s < layers % at(stages); ++s)
    ++counts[s];
  return counts;
}

std::vector<StageCostSums> aggregate_stages(const CostFile &file,
                                            const std::vector<int> &layers_per_stage) {
  std::size_t total = 0;
  for (std::size_t stage = 0; stage < layers_per_stage.size(); ++stage) {
    if (layers_per_stage[stage] <= 0) {
      throw Error(file.source_name, 0, "layers_per_stage",
                  fmt::format("stage {} has {} layers; every stage needs at least one", stage,
                              layers_per_stage[stage]));
    }
    total += at(layers_per_stage[stage]);
  }
  if (layers_per_stage.empty() || total != file.rows.size()) {
    throw Error(
        file.source_name, 0, "layers_per_stage",
        fmt::format("the stages hold {} layers but the cost file has {}", total, file.rows.size()));
  }
  std::vector<StageCostSums> stages;
  std::size_t next = 0;
  for (const int count : layers_per_stage) {
    StageCostSums sums;
    const std::size_t first = next;
    for (std::size_t i = first; i < first + at(count); ++i) {
      const CostRow &row = file.rows[i];
      sums.forward_ms = sums.forward_ms + row.fwd_ms;
      sums.backward_input_ms = sums.backward_input_ms + row.bwd_input_ms;
      sums.backward_weight_ms = sums.backward_weight_ms + row.bwd_weight_ms;
      sums.backward_total_ms = sums.backward_total_ms + row.bwd_total_ms;
      sums.recompute_ms = sums.recompute_ms + row.recompute_ms;
      sums.recompute_selective_ms = sums.recompute_selective_ms + row.recompute_selective_ms;
      sums.activation_bytes_full += row.activation_bytes_full;
      sums.activation_bytes_selective += row.activation_bytes_selective;
      sums.bwd_w_stash_bytes += row.bwd_w_stash_bytes;
      sums.bwd_w_act_bytes += row.bwd_w_act_bytes;
      sums.stored_input_bytes += row.stored_input_bytes;
      sums.param_bytes += row.param_bytes;
      sums.grad_bytes += row.grad_bytes;
      sums.optimizer_state_bytes += row.optimizer_state_bytes;
      sums.fwd_peak_temp_bytes = std::max(sums.fwd_peak_temp_bytes, row.fwd_peak_temp_bytes);
      sums.bwd_input_peak_temp_bytes =
          std::max(sums.bwd_input_peak_temp_bytes, row.bwd_input_peak_temp_bytes);
      sums.bwd_weight_peak_temp_bytes =
          std::max(sums.bwd_weight_peak_temp_bytes, row.bwd_weight_peak_temp_bytes);
      sums.recompute_peak_temp_bytes =
          std::max(sums.recompute_peak_temp_bytes, row.recompute_peak_temp_bytes);
    }
    next = first + at(count);
    sums.input_bytes = file.rows[first].input_bytes;
    sums.output_bytes = file.rows[next - 1].output_bytes;
    stages.push_back(sums);
  }
  return stages;
}

} // namespace ppsim
