#pragma once
// Overlapped recomputation, "reconstructed Lynx" (docs/lynx.md, "The model"; arXiv 2406.08756,
// abstracts only). One stage's backward pass for one microbatch is a sequence of compute segments
// 0..T-1; communication windows (tensor-parallel collectives, pipeline transfers and waits) sit
// between them. A dropped tensor is recomputed either on demand (at the start of its layer's
// backward, on the critical path, costing its full time) or inside a window before its consumer
// (costing only what overflows the window). This file is a pure computation: it does not run the
// engine. See docs/lynx.md for the decisions the abstracts leave open.
#include "costs/cost_file.h"
#include "solver/milp.h"

#include <optional>
#include <string>
#include <vector>

namespace ppsim {

/// A tensor that F produces and B consumes; it may be kept, or dropped and recomputed.
struct OverlapTensor {
  std::string name;
  int layer = 0;
  double recompute_ms = 0; ///< time to rebuild it once its producer is available
  double bytes = 0;        ///< freed per in-flight microbatch when dropped
  int producer = -1;       ///< index of the tensor it is recomputed from; -1 = the kept layer input
  int demand_segment = 0;  ///< where on-demand recomputation runs (its layer's first B segment)
  int consumer_segment = 0; ///< the B segment that reads it (>= demand_segment)
};

/// A communication window that occurs just before compute segment `position` (0..T).
struct OverlapWindow {
  std::string name;
  double length_ms = 0;
  int position = 0;
};

/// One stage's overlap problem (docs/lynx.md, "The model").
struct OverlapProblem {
  std::vector<OverlapTensor> tensors; ///< producers before their consumers
  std::vector<OverlapWindow> windows;
  int segments = 0;        ///< T
  int in_flight = 1;       ///< microbatches whose kept tensors are resident at once
  double static_bytes = 0; ///< model states, kept layer inputs and other fixed memory
  double budget_bytes = 0; ///< device memory budget (--memory), resident state included
};

/// Where a tensor's value comes from in the backward pass.
enum class Placement { keep, on_demand, window };

/// A policy: one placement per tensor (and the window index when placed in a window).
struct OverlapPlan {
  std::vector<Placement> placement;
  std::vector<int> window; ///< -1 unless placement is window
};

/// The cost of a plan (docs/lynx.md, "The model": on demand costs t_o, a window only its overflow).
struct OverlapCost {
  double exposed_ms = 0;   ///< on-demand time plus window overflow
  double recompute_ms = 0; ///< total recomputation work, hidden or not
  double peak_bytes = 0;   ///< peak over segments of resident memory
  bool feasible = false;   ///< respects availability, window order and the budget
};

/// Memory at each segment: static + in_flight * kept + recomputed tensors live from their
/// placement point to their consumer (the extra residency of early recomputation).
OverlapCost evaluate(const OverlapProblem &problem, const OverlapPlan &plan);

/// Keeps every tensor (no recomputation).
OverlapPlan keep_all(const OverlapProblem &problem);

/// The on-demand baseline: every dropped tensor of `plan` recomputed on demand.
OverlapPlan on_demand(const OverlapPlan &plan);

/// Lynx HEU (docs/lynx.md, "The model"): per layer, drop the `k` tensors with the most bytes per
/// millisecond of recomputation (same rank in every identical layer) with the least `k` that
/// fits the budget on demand, then place each dropped tensor in the latest window before its
/// consumer with spare capacity, else where it exposes least (on demand on ties). Never costs
/// more than on_demand() of its own drop set. nullopt when dropping everything does not fit.
std::optional<OverlapPlan> lynx_heuristic(const OverlapProblem &problem);

/// The exact MILP of docs/lynx.md, "The model" through solver/ (CBC); nullopt when the budget
/// cannot be met or the solver finds no solution within the limit.
std::optional<OverlapPlan> lynx_milp(const OverlapProblem &problem, const solver::Options &options);

/// One layer of a stage, for building an OverlapProblem.
struct LayerProfile {
  std::vector<OverlapTensor> tensors; ///< layer = 0; producer and segments are layer-local
  int backward_segments = 1;          ///< compute segments of one layer's B
  /// TP collective after B segment k of a layer (size backward_segments; 0 = none).
  std::vector<double> backward_window_ms;
  std::vector<double> forward_window_ms; ///< TP collectives of the interleaved F (position 0)
  double kept_bytes = 0;                 ///< always kept per layer and microbatch (its input)
};

/// Lays out a stage's layers (forward order) in backward order (last layer first), with the
/// pipeline window (transfer plus idle wait) at position 0.
OverlapProblem build_stage_problem(const std::vector<LayerProfile> &layers,
                                   double pipeline_window_ms, int in_flight, double static_bytes,
                                   double budget_bytes);

/// Analytic communication windows (docs/lynx.md): Megatron tensor parallelism runs one ring
/// all-reduce of the layer output after attention and one after the MLP, in F and in B.
struct WindowModel {
  int tp = 1;                         ///< tensor-parallel degree (1 = no TP windows)
  double tp_bandwidth_gb_per_s = 100; ///< bus bandwidth of the TP group
  double p2p_bandwidth_gb_per_s = 25; ///< pipeline link
  double bubble_ms = 0;               ///< idle wait before a backward, added to the pipeline window
};

/// One ring all-reduce of `bytes`: 2 (tp - 1) / tp * bytes / bandwidth, in ms.
double all_reduce_ms(double bytes, const WindowModel &windows);

/// A GPT block from its cost row: B = [MLP][all-reduce][attention][all-reduce]; two droppable
/// tensors, the attention core (activation_bytes_full - activation_bytes_selective, rebuilt in
/// recompute_selective_ms, read by the attention segment) and the rest of the stash above the
/// stored input (rebuilt in recompute_ms - recompute_selective_ms, read by the MLP segment);
/// the stored input is always kept.
LayerProfile layer_profile(const CostRow &row, const WindowModel &windows);

} // namespace ppsim
