#pragma once
// The block's small kernels (everything except the matmuls, which run on cuBLASLt): LayerNorm,
// bias + GeLU, causal softmax, forward and backward, in float for the comparison with the CPU
// reference and bf16 for timing (docs/profiler.md, "Modules"). Row-major, one CUDA block per row.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace ppsim::profiler::gpu {

/// y = (x - mean) * rstd * gain + bias per row of h; also writes mean and rstd per row.
template <typename T>
cudaError_t layer_norm_forward(const T *x, const float *gain, const float *bias, T *y, float *mean,
                               float *rstd, int rows, int h, cudaStream_t stream);
/// dx from dy, x, gain and the saved mean and rstd (the gain and bias gradients are column sums
/// of dy * xhat and dy, computed in W).
template <typename T>
cudaError_t layer_norm_backward_input(const T *x, const float *gain, const float *mean,
                                      const float *rstd, const T *dy, T *dx, int rows, int h,
                                      cudaStream_t stream);
/// u += bias (kept for B), y = gelu(u), tanh approximation; u is [rows, cols].
template <typename T>
cudaError_t bias_gelu_forward(T *u, const float *bias, T *y, int rows, int cols,
                              cudaStream_t stream);
/// du = dy * gelu'(u).
template <typename T>
cudaError_t gelu_backward(const T *u, const T *dy, T *du, long long count, cudaStream_t stream);
/// p = softmax(scale * s) over j <= i of each [seq, seq] matrix; `matrices` = batch * heads.
template <typename T>
cudaError_t causal_softmax_forward(const float *scores, T *p, int matrices, int seq, float scale,
                                   cudaStream_t stream);
/// ds = scale * p * (dp - sum_j dp * p) per row (zero above the diagonal).
template <typename T>
cudaError_t causal_softmax_backward(const T *p, const T *dp, float *ds, int matrices, int seq,
                                    float scale, cudaStream_t stream);

/// out[i] += in[i] (residual gradients).
cudaError_t add_inplace(__nv_bfloat16 *out, const __nv_bfloat16 *in, long long count,
                        cudaStream_t stream);
/// out[i] = bf16(in[i]) (the softmax gradient feeds bf16 matmuls).
cudaError_t float_to_bf16(const float *in, __nv_bfloat16 *out, long long count,
                          cudaStream_t stream);

} // namespace ppsim::profiler::gpu
