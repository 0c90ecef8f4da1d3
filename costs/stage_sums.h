#pragma once
// A cost file's layers grouped into pipeline stages: the sums the scenario builder fills each
// stage's costs and byte sizes from (docs/profiler.md, "The cost file").
#include "costs/cost_file.h"

#include <cstddef>
#include <vector>

namespace ppsim {

/// One stage's costs: the sums of its layers (docs/profiler.md, "The cost file").
struct StageCostSums {
  Rational forward_ms, backward_input_ms, backward_weight_ms, backward_total_ms, recompute_ms;
  Rational recompute_selective_ms;       ///< R when only the attention core is recomputed
  double activation_bytes_full = 0;      ///< M_f
  double activation_bytes_selective = 0; ///< what F keeps under selective recomputation
  double bwd_w_stash_bytes = 0;          ///< M_b
  double bwd_w_act_bytes = 0;            ///< M_ba
  double stored_input_bytes = 0;         ///< checkpoints under full recompute (sum)
  double input_bytes = 0;                ///< M_in: the first layer's input
  double output_bytes = 0;               ///< M_out: the last layer's output
  double param_bytes = 0, grad_bytes = 0, optimizer_state_bytes = 0;
  double fwd_peak_temp_bytes = 0, bwd_input_peak_temp_bytes = 0; ///< maxima over layers
  double bwd_weight_peak_temp_bytes = 0, recompute_peak_temp_bytes = 0;

  friend bool operator==(const StageCostSums &, const StageCostSums &) = default;
};

/// Bytes a device holds from start to end for some layers: their weights, gradients and optimizer
/// states, the states sharded over `optimizer_shards` data-parallel ranks (ZeRO-1).
double resident_state_bytes(double param_bytes, double grad_bytes, double optimizer_state_bytes,
                            int optimizer_shards);

/// Throws Error when a cost file of `layers` layers cannot give every one of `stages` stages a layer.
void require_layer_per_stage(std::size_t layers, int stages);

/// Consecutive layers per stage, as even as possible: the first stages take one more layer when
/// `layers` does not divide. Throws Error when there are fewer layers than stages.
std::vector<int> even_layer_counts(std::size_t layers, int stages);

/// Groups consecutive layers into stages; throws Error unless every count is positive and they
/// add up to the number of rows.
std::vector<StageCostSums> aggregate_stages(const CostFile &file,
                                            const std::vector<int> &layers_per_stage);

} // namespace ppsim
