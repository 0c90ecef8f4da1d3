// Analytic cost model: exact integer oracles from docs/profiler.md, "The analytic model"
// (Korthikanti et al. arXiv 2205.05198 section 4 and table 2; Zero Bubble arXiv 2401.10241 table
// 1).
#include "profiler/cost_model.h"

#include "base/error.h"
#include "tests/base/error_support.h"

#include <doctest/doctest.h>

namespace ppsim::profiler {
namespace {

using U = std::uint64_t;

// Korthikanti et al.'s oracles are of the unfused attention; the flash cases set it.
BlockShape gpt(U b, U s, U h, U a, U t = 1) {
  BlockShape shape;
  shape.attention = Attention::unfused;
  shape.batch = b;
  shape.seq = s;
  shape.hidden = h;
  shape.heads = a;
  shape.tp = t;
  return shape;
}

std::string error_of(const BlockShape &shape) {
  return ppsim::testing::error_message([&] { validate(shape); });
}

} // namespace

TEST_CASE("GPT block FLOPs: F = sbh(24h + 4s), B = sbh(24h + 8s), W = 24sbh^2") {
  const U b = 2, s = 4096, h = 4096, a = 32;
  const PassFlops flops = block_flops(gpt(b, s, h, a));
  CHECK(flops.forward == s * b * h * (24 * h + 4 * s));
  CHECK(flops.backward_input == s * b * h * (24 * h + 8 * s));
  CHECK(flops.backward_weight == 24 * s * b * h * h);
  CHECK(flops.backward_input + flops.backward_weight == 2 * flops.forward);
  CHECK(flops.recompute_full == flops.forward);
  CHECK(flops.recompute_selective == 4 * b * s * s * h);
}

TEST_CASE("per-op FLOPs follow Korthikanti's breakdown and sum to the pass totals") {
  const U b = 1, s = 2048, h = 12288, a = 96;
  const auto ops = block_matmuls(gpt(b, s, h, a));
  REQUIRE(ops.size() == 6);
  CHECK(ops[0].name == "qkv");
  CHECK(ops[0].forward_flops == 6 * b * s * h * h);
  CHECK(ops[1].forward_flops == 2 * b * s * s * h);
  CHECK(ops[1].backward_weight_flops == 0); // the attention core has no weights
  CHECK(ops[2].backward_input_flops == 4 * b * s * s * h);
  CHECK(ops[3].forward_flops == 2 * b * s * h * h);
  CHECK(ops[4].forward_flops + ops[5].forward_flops == 16 * b * s * h * h);
  U forward = 0, input = 0, weight = 0;
  for (const MatmulOp &op : ops) {
    forward += op.forward_flops;
    input += op.backward_input_flops;
    weight += op.backward_weight_flops;
  }
  CHECK(forward == s * b * h * (24 * h + 4 * s));
  CHECK(input == s * b * h * (24 * h + 8 * s));
  CHECK(weight == 24 * s * b * h * h);
}

TEST_CASE("tensor parallelism divides every matmul by t") {
  const PassFlops one = block_flops(gpt(4, 2048, 6144, 64));
  const PassFlops eight = block_flops(gpt(4, 2048, 6144, 64, 8));
  CHECK(eight.forward * 8 == one.forward);
  CHECK(eight.backward_input * 8 == one.backward_input);
  CHECK(eight.backward_weight * 8 == one.backward_weight);
}

TEST_CASE("model FLOPs per iteration: 72 B L s h^2 (1 + s/(6h) + V/(12hL))") {
  // s = 6h and V = 12hL make both correction terms exactly 1: 72 * 12 * 4 * 3 = 10368.
  CHECK(model_flops_per_iteration(1, 1, 12, 2, 24) == 10368);
  // GPT-3 175B, batch 1536 (Narayanan et al. 2021): 72BLsh^2 + 12BLs^2h + 6BshV.
  const U B = 1536, L = 96, s = 2048, h = 12288, V = 51200;
  CHECK(model_flops_per_iteration(B, L, s, h, V) ==
        72 * B * L * s * h * h + 12 * B * L * s * s * h + 6 * B * s * h * V);
}

TEST_CASE("activation bytes without parallelism: sbh(34 + 5as/h)") {
  // GPT-3 175B: 5as/h = 80, so the stash is exactly 114 sbh and the s^2 term is 70% of it.
  const U b = 1, s = 2048, h = 12288, a = 96;
  const ActivationBytes bytes = activation_bytes(gpt(b, s, h, a));
  CHECK(5 * a * s / h == 80);
  CHECK(bytes.full == s * b * h * (34 + 80));
  CHECK(static_cast<double>(5 * a * s * s * b) / static_cast<double>(bytes.full) ==
        doctest::Approx(0.70).epsilon(0.01));
  CHECK(bytes.selective == 34 * s * b * h);
  CHECK(bytes.checkpoint == 2 * s * b * h);
  CHECK(bytes.boundary == 2 * s * b * h);
}

TEST_CASE("the 22B model holds 6.59 GiB of activations per layer (Korthikanti et al.)") {
  const U b = 4, s = 2048, h = 6144, a = 64;
  const ActivationBytes bytes = activation_bytes(gpt(b, s, h, a));
  CHECK(bytes.full == 34 * s * b * h + 5 * a * s * s * b);
  CHECK(bytes.full == 7079985152ULL);
  const double gib = static_cast<double>(bytes.full) / (1024.0 * 1024 * 1024);
  CHECK(gib >= 6.59);
  CHECK(gib < 6.60);
}

TEST_CASE("activation bytes under tensor and sequence parallelism (Korthikanti table 2)") {
  const U b = 4, s = 2048, h = 6144, a = 64, t = 8;
  const U sbh = s * b * h;
  BlockShape shape = gpt(b, s, h, a, t);
  // TP: sbh(10 + 24/t + 5as/(ht)); TP + selective: sbh(10 + 24/t).
  CHECK(activation_bytes(shape).full == 10 * sbh + 24 * sbh / t + 5 * a * s * s * b / t);
  CHECK(activation_bytes(shape).selective == 10 * sbh + 24 * sbh / t);
  // TP + SP: sbh(34/t + 5as/(ht)); TP + SP + selective: 34sbh/t.
  shape.sequence_parallel = true;
  CHECK(activation_bytes(shape).full == 34 * sbh / t + 5 * a * s * s * b / t);
  CHECK(activation_bytes(shape).selective == 34 * sbh / t);
  CHECK(activation_bytes(shape).boundary == 2 * sbh / t);
  // Full recompute keeps the layer input only.
  CHECK(activation_bytes(shape).checkpoint == 2 * sbh);
}

TEST_CASE("without dropout the stash is sbh(32 + 2as/h)") {
  BlockShape shape = gpt(2, 1024, 2048, 16);
  shape.dropout = false;
  const U sbh = 1024 * 2 * 2048;
  CHECK(activation_bytes(shape).full == 32 * sbh + 2 * 16 * 1024 * 1024 * 2);
}

TEST_CASE("Zero Bubble split: 32sbh survive from B to W, 14sbh of them layer inputs") {
  const U b = 1, s = 4096, h = 4096, a = 32;
  const ActivationBytes bytes = activation_bytes(gpt(b, s, h, a));
  CHECK(bytes.bwd_w_stash == 32 * s * b * h);
  CHECK(bytes.bwd_w_act == 14 * s * b * h);
  CHECK(bytes.bwd_w_grad == 18 * s * b * h);
  // Memory needed to run B is the full stash sb(34h + 5as).
  CHECK(bytes.full == s * b * (34 * h + 5 * a * s));
}

TEST_CASE("parameters per GPT layer are 12h^2 + 13h") {
  const U h = 12288;
  CHECK(parameter_count(gpt(1, 2048, h, 96)) == 12 * h * h + 13 * h);
}

TEST_CASE("LLaMA block: GQA and SwiGLU FLOPs and the 7B layer's parameters") {
  BlockShape shape = gpt(1, 4096, 4096, 32);
  shape.kind = BlockKind::llama;
  CHECK(ffn_of(shape) == 11008); // LLaMA-7B
  // 4h^2 + 3hf + 2h = 202,383,360 per layer; 32 layers + 2 * 32000 * 4096 embeddings = 6.74e9.
  CHECK(parameter_count(shape) == 202383360ULL);
  shape.kv_heads = 8; // GQA with g = 8, d = 128
  const U b = 1, s = 4096, h = 4096, g = 8, d = 128, f = 11008;
  const U linear = 2 * b * s * (h * h + 2 * h * g * d + h * h + 3 * h * f);
  const U attention = 4 * b * s * s * h;
  PassFlops flops = block_flops(shape);
  CHECK(flops.forward == linear + attention);
  CHECK(flops.backward_input == linear + 2 * attention);
  CHECK(flops.backward_weight == linear);
  shape.causal_skip = true; // a kernel skipping masked tiles halves F_attn
  flops = block_flops(shape);
  CHECK(flops.forward == linear + attention / 2);
}

TEST_CASE("invalid shapes are rejected with the field named") {
  CHECK(error_of(gpt(1, 8, 16, 5)) == "field 'heads': 5 heads do not divide the hidden size 16");
  CHECK(error_of(gpt(1, 8, 16, 4, 3)) ==
        "field 'tp': tensor-parallel size 3 does not divide the 4 heads");
  CHECK(error_of(gpt(0, 8, 16, 4)) == "field 'batch': expected a positive microbatch size");
  BlockShape shape = gpt(1, 6, 16, 4, 4);
  shape.sequence_parallel = true;
  CHECK(error_of(shape) == "field 'seq': sequence parallelism needs the tensor-parallel size 4 to "
                           "divide the sequence length 6");
  shape = gpt(1, 8, 16, 4);
  shape.kv_heads = 2;
  CHECK(error_of(shape) == "field 'kv-heads': grouped-query attention needs the llama block");
  shape.kind = BlockKind::llama;
  shape.kv_heads = 3;
  CHECK(error_of(shape) == "field 'kv-heads': 3 KV heads do not divide the 4 heads");
  CHECK_THROWS_WITH_AS(block_flops(gpt(1, 1ULL << 40, 1ULL << 20, 1)),
                       "the model shape is too large: a byte or FLOP count exceeds 64 bits",
                       ppsim::Error);
}

TEST_CASE("times come from peak x efficiency, in whole nanoseconds") {
  const DeviceThroughput ideal = device_preset("ideal"); // 1 PFLOP/s
  CHECK(analytic_ms(1'000'000'000'000ULL, ideal) == Rational{1, 1});
  CHECK(analytic_ms(1'500'000ULL, ideal) == Rational{1, 500'000}); // 1.5 ns -> 2 ns
  CHECK(analytic_ms(2'400'000ULL, ideal) == Rational{1, 500'000}); // 2.4 ns -> 2 ns
  const DeviceThroughput h100 = device_preset("h100");
  CHECK(h100.peak_tflops == 989.4);
  CHECK_THROWS_WITH_AS(device_preset("h10"),
                       "field 'device': unknown device 'h10', did you mean 'h100'?", ppsim::Error);
}

TEST_CASE("issue_29 flash attention: no s^2 stash, the fp32 log-sum-exp, B recomputes the scores") {
  // FlashAttention-2 (Dao, arXiv 2307.08691): the stash drops Korthikanti's 5as^2b for 4asb, the
  // attention core's backward is 2.5x its forward, the transient scores are gone.
  const U b = 2, s = 4096, h = 4096, a = 32;
  BlockShape shape = gpt(b, s, h, a);
  shape.attention = Attention::flash;
  CHECK(BlockShape{}.attention == Attention::flash); // the default
  const ActivationBytes bytes = activation_bytes(shape);
  CHECK(bytes.full == 34 * s * b * h + 4 * a * s * b);
  CHECK(bytes.selective == 34 * s * b * h); // selective recomputation saves only the 4asb
  CHECK(bytes.bwd_w_stash == 32 * s * b * h); // the Zero Bubble split does not change
  const PassFlops flops = block_flops(shape);
  const U core_forward = 4 * b * s * s * h;
  CHECK(flops.forward == s * b * h * (24 * h + 4 * s));
  CHECK(flops.backward_input == 24 * s * b * h * h + 5 * core_forward / 2);
  CHECK(flops.backward_weight == 24 * s * b * h * h);
  CHECK(flops.recompute_selective == core_forward);
  const CostFile file = analytic_cost_file(shape, 1, device_preset("ideal"));
  const CostRow &row = file.rows[0];
  CHECK(row.fwd_peak_temp_bytes == 0);
  CHECK(row.recompute_peak_temp_bytes == 0);
  CHECK(row.bwd_input_peak_temp_bytes == 4.0 * b * s * h); // the fp32 dQ accumulator
  CHECK(row.activation_bytes_full == static_cast<double>(bytes.full));
  CHECK(file.metadata.attention == "flash");
  shape.attention = Attention::unfused;
  CHECK(analytic_cost_file(shape, 1, device_preset("ideal")).metadata.attention == "unfused");
}

TEST_CASE("an analytic cost file has identical rows with the model's numbers") {
  const BlockShape shape = gpt(1, 2048, 4096, 32);
  const ppsim::CostFile file = analytic_cost_file(shape, 4, device_preset("ideal"));
  REQUIRE(file.rows.size() == 4);
  const ppsim::CostRow &row = file.rows[3];
  CHECK(row.layer_id == 3);
  CHECK(row.layer_name == "block3");
  CHECK(row.source == "analytic");
  const PassFlops flops = block_flops(shape);
  CHECK(row.fwd_flops == flops.forward);
  CHECK(row.fwd_ms == analytic_ms(flops.forward, device_preset("ideal")));
  CHECK(row.bwd_total_ms == analytic_ms(2 * flops.forward, device_preset("ideal")));
  CHECK(row.recompute_ms == row.fwd_ms);
  CHECK(row.activation_bytes_full == static_cast<double>(activation_bytes(shape).full));
  CHECK(row.bwd_w_stash_bytes == 32.0 * 2048 * 4096);
  CHECK(row.param_bytes == 2.0 * (12.0 * 4096 * 4096 + 13 * 4096));
  CHECK(row.optimizer_state_bytes == 6 * row.param_bytes);
  CHECK(file.metadata.h == 4096);
  CHECK(file.metadata.timer == "analytic");
  CHECK_THROWS_AS(analytic_cost_file(shape, 0, device_preset("ideal")), ppsim::Error);
}

TEST_CASE("with a vocabulary the embedding and LM head are layers of their own") {
  // LLaMA-2 7B shape at s = 4096, b = 1, V = 32000: head F = B = W = 2bshV, params Vh (+ h for
  // the final norm), stash = input 2sbh + fp32 logits 4bsV; embedding: Vh params, no time.
  BlockShape shape = gpt(1, 4096, 4096, 32);
  shape.kind = BlockKind::llama;
  const CostFile file = analytic_cost_file(shape, 3, device_preset("ideal"), 32000);
  REQUIRE(file.rows.size() == 5);
  CHECK(file.rows[0].layer_name == "embedding");
  CHECK(file.rows[1].layer_name == "block0");
  CHECK(file.rows[4].layer_name == "lm_head");
  for (std::size_t i = 0; i < file.rows.size(); ++i)
    CHECK(file.rows[i].layer_id == static_cast<int>(i));
  const CostRow &embedding = file.rows[0];
  CHECK(embedding.fwd_ms == ppsim::Rational{0, 1});
  CHECK(embedding.param_bytes == 2.0 * 32000 * 4096);
  CHECK(embedding.optimizer_state_bytes == 12.0 * 32000 * 4096);
  CHECK(embedding.output_bytes == 2.0 * 4096 * 4096);
  const CostRow &head = file.rows[4];
  const U head_flops = U{2} * 4096 * 4096 * 32000;
  CHECK(head.fwd_flops == head_flops);
  CHECK(head.bwd_input_flops == head_flops);
  CHECK(head.bwd_weight_flops == head_flops);
  CHECK(head.fwd_ms == analytic_ms(head_flops, device_preset("ideal")));
  CHECK(head.param_bytes == 2.0 * (32000.0 * 4096 + 4096));
  CHECK(head.activation_bytes_full == 2.0 * 4096 * 4096 + 4.0 * 4096 * 32000);
  CHECK(head.bwd_w_stash_bytes == 2.0 * 4096 * 4096 + 2.0 * 4096 * 32000);
  CHECK(head.output_bytes == 0);
  // GPT adds learned positions to the embedding.
  const CostFile gpt_file =
      analytic_cost_file(gpt(1, 1024, 2304, 24), 1, device_preset("ideal"), 50304);
  CHECK(gpt_file.rows[0].param_bytes == 2.0 * (50304 + 1024) * 2304);
}

} // namespace ppsim::profiler
