#pragma once
// A CPU reference of the GPT block the GPU workload runs (docs/profiler.md, "Modules" and "Testing
// without a GPU"): pre-LN, causal multi-head attention, GeLU MLP, no dropout, in double precision
// at tiny sizes. Its split passes mirror the GPU ones: F keeps the stash, B computes input
// gradients and keeps what W needs (inputs of the four linears and their output gradients, Zero
// Bubble's 14 + 18 sbh), W computes the linear weights' gradients from that alone. Tests check it
// by finite differences; GPU tests compare the kernels against it.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ppsim::profiler {

/// Tiny shapes only: everything is a dense row-major std::vector<double>.
struct ReferenceShape {
  std::size_t batch = 2, seq = 8, hidden = 16, heads = 2, ffn = 64;
  [[nodiscard]] std::size_t tokens() const { return batch * seq; }
};

/// Parameters; matrices are [in, out].
struct ReferenceWeights {
  std::vector<double> ln1_gain, ln1_bias, qkv, qkv_bias, proj, proj_bias;
  std::vector<double> ln2_gain, ln2_bias, fc1, fc1_bias, fc2, fc2_bias;
};

/// Deterministic small random weights from `seed`.
ReferenceWeights random_weights(const ReferenceShape &shape, std::uint64_t seed);
/// Deterministic values in [-1, 1).
std::vector<double> random_values(std::size_t count, std::uint64_t seed);

/// What F keeps for B (the full stash of Korthikanti's accounting, minus dropout).
struct ForwardStash {
  std::vector<double> x, ln1, q, k, v, probabilities, attention, x1, ln2, fc1_out, gelu;
};

/// What B keeps for W: inputs of the four linears and the gradients of their outputs.
struct WeightStash {
  std::vector<double> ln1, attention, ln2, gelu;               ///< M_ba
  std::vector<double> d_qkv, d_proj_out, d_fc1_out, d_fc2_out; ///< M_bg
  [[nodiscard]] std::size_t input_elements() const;
  [[nodiscard]] std::size_t gradient_elements() const;
};

/// Gradients of every parameter (LayerNorm ones come from B, linears from W).
struct ReferenceGrads {
  std::vector<double> ln1_gain, ln1_bias, qkv, qkv_bias, proj, proj_bias;
  std::vector<double> ln2_gain, ln2_bias, fc1, fc1_bias, fc2, fc2_bias;
};

/// F: y = block(x), filling the stash.
std::vector<double> reference_forward(const ReferenceShape &shape, const ReferenceWeights &weights,
                                      const std::vector<double> &x, ForwardStash &stash);

/// B: dx from dy, filling the W stash and the LayerNorm gradients of `grads`.
std::vector<double> reference_backward_input(const ReferenceShape &shape,
                                             const ReferenceWeights &weights,
                                             const ForwardStash &stash,
                                             const std::vector<double> &dy,
                                             WeightStash &for_weights, ReferenceGrads &grads);

/// W: the linear layers' gradients from the W stash only.
void reference_backward_weight(const ReferenceShape &shape, const WeightStash &stash,
                               ReferenceGrads &grads);

} // namespace ppsim::profiler
