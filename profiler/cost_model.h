#pragma once
// The analytic transformer-block cost model (docs/profiler.md, "The analytic model"): matmul FLOPs
// of the passes F, B, W and recompute; activation, parameter and optimizer bytes after Korthikanti
// et al. (arXiv 2205.05198, section 4, table 2) and Zero Bubble (arXiv 2401.10241, table 1); times
// from a peak throughput and an efficiency. All counts are exact 64-bit integers.
#include "costs/cost_file.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ppsim::profiler {

/// GPT: LayerNorm, MHA, GeLU MLP with 4h. LLaMA: RMSNorm, RoPE, GQA, SwiGLU with three h x f.
enum class BlockKind { gpt, llama };

/// How the attention core runs (docs/profiler.md, "The analytic model").
enum class Attention {
  /// FlashAttention-2 (Dao, arXiv 2307.08691): tiles in on-chip memory, the a s^2 b scores never
  /// stored; F keeps the fp32 log-sum-exp per row, B recomputes the scores (2.5x F's FLOPs) and
  /// the dropout mask from the RNG state. What Megatron-LM, PyTorch SDPA and TE run today.
  flash,
  /// The softmax, its dropout mask and the dropout output stored (Korthikanti et al. 2022).
  unfused,
};
/// "flash" or "unfused".
const char *attention_name(Attention attention);

/// One transformer block's shape and parallel layout.
struct BlockShape {
  BlockKind kind = BlockKind::gpt;
  std::uint64_t batch = 1;        ///< b, the microbatch size
  std::uint64_t seq = 2048;       ///< s
  std::uint64_t hidden = 4096;    ///< h
  std::uint64_t heads = 32;       ///< a
  std::uint64_t kv_heads = 0;     ///< g (LLaMA GQA); 0 means a
  std::uint64_t ffn = 0;          ///< f; 0 means 4h (GPT) or the LLaMA rule 8h/3 rounded up to 256
  std::uint64_t tp = 1;           ///< t, tensor-parallel size
  bool sequence_parallel = false; ///< Megatron SP: LayerNorm/dropout regions sharded by t
  bool dropout = true;            ///< 1-byte masks and dropout outputs are stashed
  bool causal_skip = false; ///< LLaMA: an attention kernel that skips masked tiles halves F_attn
  Attention attention = Attention::flash;
};

/// Throws Error (field named) when `a` does not divide `h`, `t` does not divide the heads, ...
void validate(const BlockShape &shape);
/// kv_heads and ffn with their defaults applied.
std::uint64_t kv_heads_of(const BlockShape &shape);
std::uint64_t ffn_of(const BlockShape &shape);

/// One matmul of the block with the FLOPs it costs in each pass, per GPU.
struct MatmulOp {
  std::string name;
  std::uint64_t forward_flops = 0;
  std::uint64_t backward_input_flops = 0;
  std::uint64_t backward_weight_flops = 0; ///< 0 for the attention core (no weights)
};

/// The block's matmuls in forward order (the host-side plan the workload launches).
std::vector<MatmulOp> block_matmuls(const BlockShape &shape);

/// Per-GPU FLOPs of each pass of one block.
struct PassFlops {
  std::uint64_t forward = 0;             ///< F = sbh(24h + 4s) for GPT, t = 1
  std::uint64_t backward_input = 0;      ///< B = sbh(24h + 8s)
  std::uint64_t backward_weight = 0;     ///< W = 24sbh^2
  std::uint64_t recompute_full = 0;      ///< one more F
  std::uint64_t recompute_selective = 0; ///< the attention core again, 4bs^2h
};
PassFlops block_flops(const BlockShape &shape);

/// Model FLOPs per iteration incl. logits, 72 B L s h^2 (1 + s/(6h) + V/(12hL)), for batch B.
std::uint64_t model_flops_per_iteration(std::uint64_t global_batch, std::uint64_t layers,
                                        std::uint64_t seq, std::uint64_t hidden,
                                        std::uint64_t vocab);

/// Activation bytes per block and per GPU (16-bit activations, 1-byte dropout masks).
struct ActivationBytes {
  /// stash from F to B, no recompute: sbh(34 + 5as/h) at t = 1 unfused, sbh(34 + 4a/h) with
  /// flash attention (the fp32 log-sum-exp instead of the scores, no core dropout mask)
  std::uint64_t full = 0;
  std::uint64_t selective = 0;   ///< stash under selective recompute: 34sbh at t = 1
  std::uint64_t checkpoint = 0;  ///< kept under full recompute: the layer input 2sbh
  std::uint64_t bwd_w_stash = 0; ///< kept from B to W: 32sbh at t = 1
  std::uint64_t bwd_w_act = 0;   ///< of which inputs of the linears (M_ba): 14sbh
  std::uint64_t bwd_w_grad = 0;  ///< of which their output gradients (M_bg): 18sbh
  std::uint64_t boundary = 0;    ///< the tensor passed between stages: 2sbh (/t with SP)
};
ActivationBytes activation_bytes(const BlockShape &shape);

/// Parameters of one block on one GPU (12h^2 + 13h for GPT at t = 1).
std::uint64_t parameter_count(const BlockShape &shape);

/// A device's peak dense 16-bit throughput and the fraction of it the model assumes.
struct DeviceThroughput {
  std::string name = "h100";
  double peak_tflops = 989.4; ///< H100 SXM dense BF16
  double efficiency = 0.5;
};
/// "h100", "a100", "ideal" (1 PFLOP/s at efficiency 1); throws Error for other names.
DeviceThroughput device_preset(const std::string &name);

/// Milliseconds for `flops` at the device's effective rate, rounded to whole nanoseconds.
Rational analytic_ms(std::uint64_t flops, const DeviceThroughput &device);

/// The cost-file row of one block (source "analytic").
CostRow analytic_row(const BlockShape &shape, int layer_id, const DeviceThroughput &device);
/// The input embedding of a `vocab`-token model as a layer of its own (vocabulary-parallel over
/// t; GPT adds learned positions): no matmul, so no time, but its parameters and their states.
CostRow analytic_embedding_row(const BlockShape &shape, std::uint64_t vocab, int layer_id);
/// The final norm, LM head and cross-entropy loss as one layer: F = B = W = 2bshV/t FLOPs; it
/// stashes its input and the fp32 logits the loss gradient needs (4bsV/t bytes).
CostRow analytic_head_row(const BlockShape &shape, std::uint64_t vocab, int layer_id,
                          const DeviceThroughput &device);
/// `layers` identical block rows plus metadata describing the shape; with `vocab` > 0 the
/// embedding comes first and the LM head last, so the first and last stages are unbalanced as
/// in a real model.
CostFile analytic_cost_file(const BlockShape &shape, int layers, const DeviceThroughput &device,
                            std::uint64_t vocab = 0);

} // namespace ppsim::profiler
