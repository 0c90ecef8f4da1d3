#include "profiler/cost_model.h"

#include "base/error.h"

#include <cmath>
#include <fmt/format.h>

namespace ppsim::profiler {
namespace {

// Products of shape sizes; a shape whose counts leave 64 bits is a user error, not a wrap.
std::uint64_t mul(std::initializer_list<std::uint64_t> factors) {
  std::uint64_t product = 1;
  for (const std::uint64_t factor : factors) {
    if (__builtin_mul_overflow(product, factor, &product)) {
      throw Error("the model shape is too large: a byte or FLOP count exceeds 64 bits");
    }
  }
  return product;
}

[[noreturn]] void reject(const char *field, const std::string &sentence) {
  throw Error("", 0, field, sentence);
}

// Sizes after tensor-parallel sharding.
struct Local {
  std::uint64_t b, s, h, hl, al, gdl, fl, sp; // sp: divisor of the replicated regions
};

Local local_sizes(const BlockShape &shape) {
  validate(shape);
  const std::uint64_t t = shape.tp;
  const std::uint64_t head_dim = shape.hidden / shape.heads;
  return {shape.batch,       shape.seq,
          shape.hidden,      shape.hidden / t,
          shape.heads / t,   kv_heads_of(shape) * head_dim / t,
          ffn_of(shape) / t, shape.sequence_parallel ? t : 1};
}

// Mixed-precision Adam: 2 (bf16 weight) + 2 (grad) + 12 (fp32 master, m, v) bytes per parameter.
void set_parameter_bytes(CostRow &row, std::uint64_t parameters) {
  row.param_bytes = 2.0 * static_cast<double>(parameters);
  row.grad_bytes = 2.0 * static_cast<double>(parameters);
  row.optimizer_state_bytes = 12.0 * static_cast<double>(parameters);
}

} // namespace

const char *attention_name(Attention attention) {
  return attention == Attention::flash ? "flash" : "unfused";
}

std::uint64_t kv_heads_of(const BlockShape &shape) {
  return shape.kv_heads == 0 ? shape.heads : shape.kv_heads;
}

std::uint64_t ffn_of(const BlockShape &shape) {
  if (shape.ffn != 0)
    return shape.ffn;
  if (shape.kind == BlockKind::gpt)
    return 4 * shape.hidden;
  // LLaMA (Touvron et al. 2023): 2/3 of 4h, rounded up to a multiple of 256 (4096 -> 11008).
  const std::uint64_t two_thirds = (8 * shape.hidden + 2) / 3;
  return (two_thirds + 255) / 256 * 256;
}

void validate(const BlockShape &shape) {
  if (shape.batch == 0)
    reject("batch", "expected a positive microbatch size");
  if (shape.seq == 0)
    reject("seq", "expected a positive sequence length");
  if (shape.hidden == 0)
    reject("hidden", "expected a positive hidden size");
  if (shape.heads == 0)
    reject("heads", "expected a positive number of heads");
  if (shape.tp == 0)
    reject("tp", "expected a positive tensor-parallel size");
  if (shape.hidden % shape.heads != 0) {
    reject("heads",
           fmt::format("{} heads do not divide the hidden size {}", shape.heads, shape.hidden));
  }
  if (shape.heads % shape.tp != 0) {
    reject("tp", fmt::format("tensor-parallel size {} does not divide the {} heads", shape.tp,
                             shape.heads));
  }
  const std::uint64_t kv = kv_heads_of(shape);
  if (shape.kind == BlockKind::gpt && kv != shape.heads) {
    reject("kv-heads", "grouped-query attention needs the llama block");
  }
  if (kv > shape.heads || shape.heads % kv != 0) {
    reject("kv-heads", fmt::format("{} KV heads do not divide the {} heads", kv, shape.heads));
  }
  if (kv % shape.tp != 0) {
    reject("tp",
           fmt::format("tensor-parallel size {} does not divide the {} KV heads", shape.tp, kv));
  }
  if (ffn_of(shape) % shape.tp != 0) {
    reject("tp", fmt::format("tensor-parallel size {} does not divide the FFN size {}", shape.tp,
                             ffn_of(shape)));
  }
  if (shape.sequence_parallel && shape.seq % shape.tp != 0) {
    reject("seq", fmt::format("sequence parallelism needs the tensor-parallel size {} to divide "
                              "the sequence length {}",
                              shape.tp, shape.seq));
  }
}

std::vector<MatmulOp> block_matmuls(const BlockShape &shape) {
  const Local l = local_sizes(shape);
  const auto linear = [](std::string name, std::uint64_t flops) {
    return MatmulOp{std::move(name), flops, flops, flops}; // dX and dW each cost one F
  };
  // The attention core has no weights: its whole backward (two matmuls each) is in B. Flash
  // attention's backward also recomputes the scores QK^T: five matmuls, 2.5x F (Dao 2023,
  // arXiv 2307.08691, section 4.1), the recomputation counted with the scores.
  std::uint64_t core = mul({2, l.b, l.s, l.s, l.hl});
  if (shape.kind == BlockKind::llama && shape.causal_skip)
    core /= 2;
  const bool flash = shape.attention == Attention::flash;
  const MatmulOp scores{"attention_scores", core, (flash ? 3 : 2) * core, 0};
  const MatmulOp values{"attention_values", core, 2 * core, 0};
  if (shape.kind == BlockKind::gpt) {
    return {linear("qkv", mul({2, l.b, l.s, l.h, 3 * l.hl})),
            scores,
            values,
            linear("attention_proj", mul({2, l.b, l.s, l.hl, l.h})),
            linear("mlp_up", mul({2, l.b, l.s, l.h, l.fl})),
            linear("mlp_down", mul({2, l.b, l.s, l.fl, l.h}))};
  }
  return {linear("q", mul({2, l.b, l.s, l.h, l.hl})),
          linear("k", mul({2, l.b, l.s, l.h, l.gdl})),
          linear("v", mul({2, l.b, l.s, l.h, l.gdl})),
          scores,
          values,
          linear("o", mul({2, l.b, l.s, l.hl, l.h})),
          linear("gate", mul({2, l.b, l.s, l.h, l.fl})),
          linear("up", mul({2, l.b, l.s, l.h, l.fl})),
          linear("down", mul({2, l.b, l.s, l.fl, l.h}))};
}

PassFlops block_flops(const BlockShape &shape) {
  PassFlops flops;
  for (const MatmulOp &op : block_matmuls(shape)) {
    flops.forward += op.forward_flops;
    flops.backward_input += op.backward_input_flops;
    flops.backward_weight += op.backward_weight_flops;
    if (op.backward_weight_flops == 0)
      flops.recompute_selective += op.forward_flops;
  }
  flops.recompute_full = flops.forward;
  return flops;
}

std::uint64_t model_flops_per_iteration(std::uint64_t global_batch, std::uint64_t layers,
                                        std::uint64_t seq, std::uint64_t hidden,
                                        std::uint64_t vocab) {
  // 72BLsh^2 (1 + s/(6h) + V/(12hL)) = 72BLsh^2 + 12BLs^2h + 6BshV (Narayanan et al. 2021).
  return mul({72, global_batch, layers, seq, hidden, hidden}) +
         mul({12, global_batch, layers, seq, seq, hidden}) +
         mul({6, global_batch, seq, hidden, vocab});
}

ActivationBytes activation_bytes(const BlockShape &shape) {
  const Local l = local_sizes(shape);
  const std::uint64_t sbh_replicated = mul({l.s, l.b, l.h}) / l.sp;
  const std::uint64_t sbhl = mul({l.s, l.b, l.hl});
  const std::uint64_t sbfl = mul({l.s, l.b, l.fl});
  // Korthikanti et al. section 4.1: two norm inputs (4sbh), the inputs of the QKV and first MLP
  // linear (4sbh) and the two dropout masks (2sbh) are not sharded by TP, only by SP.
  const std::uint64_t replicated = (8 + (shape.dropout ? 2 : 0)) * sbh_replicated;
  // Unfused: softmax output (2), its dropout mask (1) and dropout output (2) per a s^2 b. Flash:
  // the fp32 log-sum-exp of each row (4 per a s b); the mask is regenerated from the RNG state.
  const std::uint64_t core = shape.attention == Attention::flash
                                 ? mul({4, l.al, l.s, l.b})
                                 : mul({shape.dropout ? 5ULL : 2ULL, l.al, l.s, l.s, l.b});
  std::uint64_t sharded = 0;
  ActivationBytes bytes;
  if (shape.kind == BlockKind::gpt) {
    // Q, K, V (6), the projection input (2), GeLU input and output (2 + 2 per f).
    sharded = 8 * sbhl + 4 * sbfl;
    // Zero Bubble: inputs of the four linears (QKV, proj, fc1, fc2) and their output gradients.
    bytes.bwd_w_act = 4 * sbh_replicated + 2 * sbhl + 2 * sbfl;
    bytes.bwd_w_grad = 6 * sbhl + 2 * sbh_replicated + 2 * sbfl + 2 * sbh_replicated;
  } else {
    // Rotated Q (2) and K, V (2 + 2 per g d), the o input (2), gate, up and SwiGLU outputs (6f).
    const std::uint64_t sbgdl = mul({l.s, l.b, l.gdl});
    sharded = 4 * sbhl + 4 * sbgdl + 6 * sbfl;
    bytes.bwd_w_act = 4 * sbh_replicated + 2 * sbhl + 2 * sbfl;
    bytes.bwd_w_grad = 2 * sbhl + 4 * sbgdl + 2 * sbh_replicated + 4 * sbfl + 2 * sbh_replicated;
  }
  bytes.full = replicated + sharded + core;
  bytes.selective = replicated + sharded;
  bytes.checkpoint = 2 * mul({l.s, l.b, l.h});
  bytes.bwd_w_stash = bytes.bwd_w_act + bytes.bwd_w_grad;
  bytes.boundary = 2 * sbh_replicated;
  return bytes;
}

std::uint64_t parameter_count(const BlockShape &shape) {
  const Local l = local_sizes(shape);
  if (shape.kind == BlockKind::gpt) {
    // QKV 3h^2 + 3h, proj h^2 + h, fc1 hf + f, fc2 fh + h, two LayerNorms 4h: 12h^2 + 13h.
    return 3 * l.h * l.hl + 3 * l.hl + l.hl * l.h + l.h + 2 * l.h * l.fl + l.fl + l.h + 4 * l.h;
  }
  // q, o h^2; k, v h g d; gate, up, down h f; two RMSNorm weights; no biases.
  return 2 * l.h * l.hl + 2 * l.h * l.gdl + 3 * l.h * l.fl + 2 * l.h;
}

DeviceThroughput device_preset(const std::string &name) {
  if (name == "h100")
    return {"h100", 989.4, 0.5};
  if (name == "a100")
    return {"a100", 312.0, 0.5};
  if (name == "ideal")
    return {"ideal", 1000.0, 1.0};
  throw Error("", 0, "device", unknown_name("device", name, {"h100", "a100", "ideal"}));
}

Rational analytic_ms(std::uint64_t flops, const DeviceThroughput &device) {
  if (!(device.peak_tflops > 0) || !(device.efficiency > 0) || device.efficiency > 1) {
    throw Error("", 0, "--efficiency", "expected a peak above 0 and an efficiency in (0, 1]");
  }
  const double nanoseconds =
      static_cast<double>(flops) / (device.peak_tflops * device.efficiency * 1e3);
  // Whole nanoseconds stay exact below 2^53 (about 104 days per layer); past it the conversion to
  // an integer would overflow (docs/reliability.md, "Limits").
  if (!(nanoseconds <= 0x1p53)) {
    throw Error(
        "", 0, "--peak-tflops",
        fmt::format(
            "a layer of {} FLOP at {} TFLOP/s and efficiency {} takes over 2^53 ns (about "
            "104 days), beyond what a cost file holds; raise --peak-tflops or --efficiency, "
            "or shrink the model",
            static_cast<double>(flops), device.peak_tflops, device.efficiency));
  }
  return normalized({static_cast<std::int64_t>(std::llround(nanoseconds)), 1'000'000});
}

CostRow analytic_row(const BlockShape &shape, int layer_id, const DeviceThroughput &device) {
  const PassFlops flops = block_flops(shape);
  const ActivationBytes bytes = activation_bytes(shape);
  const std::uint64_t parameters = parameter_count(shape);
  const Local l = local_sizes(shape);
  CostRow row;
  row.layer_id = layer_id;
  row.layer_name = fmt::format("block{}", layer_id);
  row.layer_type = shape.kind == BlockKind::gpt ? "gpt_block" : "llama_block";
  row.fwd_ms = row.fwd_ms_p10 = row.fwd_ms_p90 = analytic_ms(flops.forward, device);
  row.bwd_input_ms = row.bwd_input_ms_p10 = row.bwd_input_ms_p90 =
      analytic_ms(flops.backward_input, device);
  row.bwd_weight_ms = row.bwd_weight_ms_p10 = row.bwd_weight_ms_p90 =
      analytic_ms(flops.backward_weight, device);
  row.bwd_total_ms = analytic_ms(flops.backward_input + flops.backward_weight, device);
  row.recompute_ms = analytic_ms(flops.recompute_full, device);
  row.recompute_selective_ms = analytic_ms(flops.recompute_selective, device);
  row.fwd_flops = flops.forward;
  row.bwd_input_flops = flops.backward_input;
  row.bwd_weight_flops = flops.backward_weight;
  row.recompute_flops = flops.recompute_full;
  row.input_bytes = row.output_bytes = static_cast<double>(bytes.boundary);
  row.stored_input_bytes = static_cast<double>(bytes.checkpoint);
  row.activation_bytes_full = static_cast<double>(bytes.full);
  row.activation_bytes_selective = static_cast<double>(bytes.selective);
  row.bwd_w_stash_bytes = static_cast<double>(bytes.bwd_w_stash);
  row.bwd_w_act_bytes = static_cast<double>(bytes.bwd_w_act);
  set_parameter_bytes(row, parameters);
  if (shape.attention == Attention::flash) {
    // Scores live in on-chip tiles; B accumulates dQ in fp32 (FlashAttention-2's dq_accum).
    row.fwd_peak_temp_bytes = row.recompute_peak_temp_bytes = 0;
    row.bwd_input_peak_temp_bytes = 4.0 * static_cast<double>(mul({l.b, l.s, l.hl}));
  } else {
    // An unfused attention materialises the a s^2 b score matrix (bf16) in F; B needs two.
    const double scores = 2.0 * static_cast<double>(mul({l.al, l.s, l.s, l.b}));
    row.fwd_peak_temp_bytes = row.recompute_peak_temp_bytes = scores;
    row.bwd_input_peak_temp_bytes = 2 * scores;
  }
  row.bwd_weight_peak_temp_bytes = 0;
  row.n_samples = 0;
  row.source = "analytic";
  return row;
}

CostRow analytic_embedding_row(const BlockShape &shape, std::uint64_t vocab, int layer_id) {
  const Local l = local_sizes(shape);
  const std::uint64_t positions = shape.kind == BlockKind::gpt ? l.s : 0;
  CostRow row;
  row.layer_id = layer_id;
  row.layer_name = "embedding";
  row.layer_type = "embedding";
  row.input_bytes = static_cast<double>(mul({8, l.b, l.s})); // int64 token ids
  row.output_bytes = static_cast<double>(mul({2, l.b, l.s, l.h}) / l.sp);
  row.stored_input_bytes = row.activation_bytes_full = row.activation_bytes_selective =
      row.input_bytes; // the backward scatters into the rows the ids name
  set_parameter_bytes(row, mul({vocab, l.h}) / shape.tp + mul({positions, l.h}));
  row.source = "analytic";
  return row;
}

CostRow analytic_head_row(const BlockShape &shape, std::uint64_t vocab, int layer_id,
                          const DeviceThroughput &device) {
  const Local l = local_sizes(shape);
  const std::uint64_t flops = mul({2, l.b, l.s, l.h, vocab}) / shape.tp;
  const double input = static_cast<double>(mul({2, l.b, l.s, l.h}) / l.sp);
  const double logits_fp32 = static_cast<double>(mul({4, l.b, l.s, vocab}) / shape.tp);
  CostRow row;
  row.layer_id = layer_id;
  row.layer_name = "lm_head";
  row.layer_type = "lm_head";
  row.fwd_ms = row.fwd_ms_p10 = row.fwd_ms_p90 = analytic_ms(flops, device);
  row.bwd_input_ms = row.bwd_input_ms_p10 = row.bwd_input_ms_p90 = row.fwd_ms;
  row.bwd_weight_ms = row.bwd_weight_ms_p10 = row.bwd_weight_ms_p90 = row.fwd_ms;
  row.bwd_total_ms = analytic_ms(2 * flops, device);
  row.recompute_ms = row.recompute_selective_ms = row.fwd_ms;
  row.fwd_flops = row.bwd_input_flops = row.bwd_weight_flops = row.recompute_flops = flops;
  row.input_bytes = row.stored_input_bytes = input;
  row.activation_bytes_full = row.activation_bytes_selective = input + logits_fp32;
  // W needs the head's input and the bf16 gradient of the logits.
  row.bwd_w_act_bytes = input;
  row.bwd_w_stash_bytes = input + logits_fp32 / 2;
  row.fwd_peak_temp_bytes = row.recompute_peak_temp_bytes = logits_fp32; // softmax in fp32
  row.bwd_input_peak_temp_bytes = logits_fp32;                           // its gradient
  set_parameter_bytes(row, mul({vocab, l.h}) / shape.tp + l.h);          // + the final norm
  row.source = "analytic";
  return row;
}

CostFile analytic_cost_file(const BlockShape &shape, int layers, const DeviceThroughput &device,
                            std::uint64_t vocab) {
  if (layers <= 0)
    throw Error("", 0, "--layers", "expected a positive number of layers");
  CostFile file;
  if (vocab > 0)
    file.rows.push_back(analytic_embedding_row(shape, vocab, 0));
  for (int layer = 0; layer < layers; ++layer) {
    CostRow row = analytic_row(shape, static_cast<int>(file.rows.size()), device);
    row.layer_name = fmt::format("block{}", layer);
    file.rows.push_back(std::move(row));
  }
  if (vocab > 0)
    file.rows.push_back(
        analytic_head_row(shape, vocab, static_cast<int>(file.rows.size()), device));
  CostMetadata &m = file.metadata;
  const auto as_int = [](std::uint64_t value) { return static_cast<std::int64_t>(value); };
  m.device = fmt::format("analytic:{}", device.name);
  m.b = as_int(shape.batch);
  m.s = as_int(shape.seq);
  m.h = as_int(shape.hidden);
  m.a = as_int(shape.heads);
  m.kv_heads = as_int(kv_heads_of(shape));
  m.ffn = as_int(ffn_of(shape));
  m.tp = as_int(shape.tp);
  m.dropout = shape.dropout;
  m.attention = attention_name(shape.attention);
  m.timer = "analytic";
  m.warnings.push_back(fmt::format("analytic model: times assume {} of {} TFLOP/s; tensor-parallel "
                                   "communication is not included",
                                   device.efficiency, device.peak_tflops));
  return file;
}

} // namespace ppsim::profiler
