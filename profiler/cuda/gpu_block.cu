#include "profiler/cuda/gpu_block.h"

#include "base/assert.h"
#include "base/error.h"
#include "profiler/cuda/block_kernels.h"

#include <cmath>
#include <fmt/format.h>
#include <vector>

namespace ppsim::profiler::gpu {
namespace {

using bf16 = __nv_bfloat16;

// Deterministic small weights, filled on the host once (not timed).
void fill(bf16 *device, std::size_t count, float scale, cudaStream_t stream) {
  std::vector<bf16> host(count);
  std::uint64_t state = 0x9e3779b97f4a7c15ULL ^ count;
  for (bf16 &value : host) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    value = __float2bfloat16(scale * (static_cast<float>(state >> 40) / 16777216.0f * 2 - 1));
  }
  check_cuda(
      cudaMemcpyAsync(device, host.data(), count * sizeof(bf16), cudaMemcpyHostToDevice, stream),
      "cudaMemcpyAsync");
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

void fill_constant(float *device, std::size_t count, float value, cudaStream_t stream) {
  std::vector<float> host(count, value);
  check_cuda(
      cudaMemcpyAsync(device, host.data(), count * sizeof(float), cudaMemcpyHostToDevice, stream),
      "cudaMemcpyAsync");
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

} // namespace

void check_cuda(cudaError_t status, const char *what) {
  if (status != cudaSuccess) {
    throw Error(fmt::format("{} failed: {} ({})", what, cudaGetErrorString(status),
                            static_cast<int>(status)));
  }
}

void check_cublas(cublasStatus_t status, const char *what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw Error(fmt::format("{} failed: cuBLAS status {}", what, static_cast<int>(status)));
  }
}

template <typename T> T *GpuBlock::allocate(std::size_t count) {
  return reinterpret_cast<T *>(base_ + arena_.allocate(count * sizeof(T)));
}

void GpuBlock::release(const void *pointer) {
  arena_.release(static_cast<std::size_t>(static_cast<const char *>(pointer) - base_));
}

GpuBlock::GpuBlock(const GpuBlockShape &shape, Arena &arena, char *base, cublasLtHandle_t handle,
                   cudaStream_t stream)
    : arena_(arena), base_(base), handle_(handle), stream_(stream),
      tokens_(shape.batch * shape.seq), hidden_(shape.hidden), ffn_(shape.ffn), heads_(shape.heads),
      seq_(shape.seq), batch_(shape.batch) {
  const std::size_t h = hidden_, f = ffn_, T = tokens_;
  workspace_ = base_ + arena_.allocate(workspace_bytes_);
  w_qkv_ = allocate<bf16>(h * 3 * h);
  w_proj_ = allocate<bf16>(h * h);
  w_fc1_ = allocate<bf16>(h * f);
  w_fc2_ = allocate<bf16>(f * h);
  g_qkv_ = allocate<bf16>(h * 3 * h);
  g_proj_ = allocate<bf16>(h * h);
  g_fc1_ = allocate<bf16>(h * f);
  g_fc2_ = allocate<bf16>(f * h);
  ln1_gain_ = allocate<float>(h);
  ln1_bias_ = allocate<float>(h);
  ln2_gain_ = allocate<float>(h);
  ln2_bias_ = allocate<float>(h);
  fc1_bias_ = allocate<float>(f);
  x_ = allocate<bf16>(T * h);
  y_ = allocate<bf16>(T * h);
  dy_ = allocate<bf16>(T * h);
  dx_ = allocate<bf16>(T * h);
  const float scale = 1.0f / std::sqrt(static_cast<float>(h));
  fill(w_qkv_, h * 3 * h, scale, stream_);
  fill(w_proj_, h * h, scale, stream_);
  fill(w_fc1_, h * f, scale, stream_);
  fill(w_fc2_, f * h, 1.0f / std::sqrt(static_cast<float>(f)), stream_);
  fill(x_, T * h, 1.0f, stream_);
  fill(dy_, T * h, 1e-2f, stream_);
  fill_constant(ln1_gain_, h, 1.0f, stream_);
  fill_constant(ln2_gain_, h, 1.0f, stream_);
  fill_constant(ln1_bias_, h, 0.0f, stream_);
  fill_constant(ln2_bias_, h, 0.0f, stream_);
  fill_constant(fc1_bias_, f, 0.0f, stream_);
}

void GpuBlock::gemm(bool transpose_a, bool transpose_b, int m, int n, int k, const void *a, int lda,
                    long long stride_a, const void *b, int ldb, long long stride_b, void *d,
                    int ldd, long long stride_d, int batch, cudaDataType_t d_type) {
  cublasLtMatmulDesc_t description = nullptr;
  check_cublas(cublasLtMatmulDescCreate(&description, CUBLAS_COMPUTE_32F, CUDA_R_32F),
               "cublasLtMatmulDescCreate");
  const cublasOperation_t op_a = transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(description, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a);
  cublasLtMatmulDescSetAttribute(description, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b);
  cublasLtMatrixLayout_t layout_a = nullptr, layout_b = nullptr, layout_d = nullptr;
  check_cublas(cublasLtMatrixLayoutCreate(&layout_a, CUDA_R_16BF, transpose_a ? k : m,
                                          transpose_a ? m : k, lda),
               "layout");
  check_cublas(cublasLtMatrixLayoutCreate(&layout_b, CUDA_R_16BF, transpose_b ? n : k,
                                          transpose_b ? k : n, ldb),
               "layout");
  check_cublas(cublasLtMatrixLayoutCreate(&layout_d, d_type, m, n, ldd), "layout");
  if (batch > 1) {
    for (auto [layout, stride] : {std::pair{layout_a, stride_a}, std::pair{layout_b, stride_b},
                                  std::pair{layout_d, stride_d}}) {
      cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                       sizeof batch);
      cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                       sizeof stride);
    }
  }
  cublasLtMatmulPreference_t preference = nullptr;
  cublasLtMatmulPreferenceCreate(&preference);
  cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                       &workspace_bytes_, sizeof workspace_bytes_);
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  check_cublas(cublasLtMatmulAlgoGetHeuristic(handle_, description, layout_a, layout_b, layout_d,
                                              layout_d, preference, 1, &heuristic, &found),
               "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0)
    throw Error(fmt::format("cuBLASLt has no algorithm for a {}x{}x{} matmul", m, n, k));
  const float alpha = 1.0f, beta = 0.0f;
  check_cublas(cublasLtMatmul(handle_, description, &alpha, a, layout_a, b, layout_b, &beta, d,
                              layout_d, d, layout_d, &heuristic.algo, workspace_, workspace_bytes_,
                              stream_),
               "cublasLtMatmul");
  cublasLtMatmulPreferenceDestroy(preference);
  cublasLtMatrixLayoutDestroy(layout_a);
  cublasLtMatrixLayoutDestroy(layout_b);
  cublasLtMatrixLayoutDestroy(layout_d);
  cublasLtMatmulDescDestroy(description);
}

// Row-major C[M,N] = X[M,K] W[K,N] is column-major C^T = W^T X^T: no transposes, m = N, n = M.
void GpuBlock::linear(const bf16 *x, const bf16 *w, bf16 *y, int rows, int k, int n) {
  gemm(false, false, n, rows, k, w, n, 0, x, k, 0, y, n, 0, 1, CUDA_R_16BF);
}
// dX[M,K] = dY[M,N] W[K,N]^T.
void GpuBlock::linear_input_grad(const bf16 *dy, const bf16 *w, bf16 *dx, int rows, int k, int n) {
  gemm(true, false, k, rows, n, w, n, 0, dy, n, 0, dx, k, 0, 1, CUDA_R_16BF);
}
// dW[K,N] = X[M,K]^T dY[M,N].
void GpuBlock::linear_weight_grad(const bf16 *x, const bf16 *dy, bf16 *dw, int rows, int k, int n) {
  gemm(false, true, n, k, rows, dy, n, 0, x, k, 0, dw, n, 0, 1, CUDA_R_16BF);
}

void GpuBlock::attention_forward(bool core_only) {
  (void)core_only;
  const int h = hidden_, s = seq_, d = hidden_ / heads_;
  const long long square = static_cast<long long>(s) * s;
  float *scores = allocate<float>(static_cast<std::size_t>(batch_) * heads_ * square); // transient
  for (int b = 0; b < batch_; ++b) {
    const bf16 *q = qkv_ + static_cast<long long>(b) * s * 3 * h;
    // S[s,s] = Q K^T per head (row-major) = column-major S^T = K Q^T: A = K (op T), B = Q.
    gemm(true, false, s, s, d, q + h, 3 * h, d, q, 3 * h, d, scores + b * heads_ * square, s,
         square, heads_, CUDA_R_32F);
  }
  check_cuda(causal_softmax_forward<bf16>(scores, probabilities_, batch_ * heads_, s,
                                          1.0f / std::sqrt(static_cast<float>(d)), stream_),
             "causal_softmax_forward");
  release(scores);
  for (int b = 0; b < batch_; ++b) {
    const bf16 *v = qkv_ + static_cast<long long>(b) * s * 3 * h + 2 * h;
    // O[s,d] = P[s,s] V[s,d] = column-major O^T = V^T P^T.
    gemm(false, false, d, s, s, v, 3 * h, d, probabilities_ + b * heads_ * square, s, square,
         attention_ + static_cast<long long>(b) * s * h, h, d, heads_, CUDA_R_16BF);
  }
}

void GpuBlock::forward(bool attention_core_only) {
  const std::size_t h = hidden_, f = ffn_, T = tokens_;
  if (attention_core_only) { // R_sel: the attention core again, from the kept Q, K, V
    PPSIM_ASSERT(stash_live_);
    attention_forward(true);
    return;
  }
  if (!stash_live_) {
    const std::size_t before = arena_.live_bytes();
    ln1_ = allocate<bf16>(T * h);
    qkv_ = allocate<bf16>(T * 3 * h);
    probabilities_ = allocate<bf16>(static_cast<std::size_t>(batch_) * heads_ * seq_ * seq_);
    attention_ = allocate<bf16>(T * h);
    x1_ = allocate<bf16>(T * h);
    ln2_ = allocate<bf16>(T * h);
    fc1_out_ = allocate<bf16>(T * f);
    gelu_ = allocate<bf16>(T * f);
    mean1_ = allocate<float>(T);
    rstd1_ = allocate<float>(T);
    mean2_ = allocate<float>(T);
    rstd2_ = allocate<float>(T);
    // The layer input x is part of the stash too (it is the LayerNorm-1 input).
    stash_bytes_ = arena_.live_bytes() - before + T * h * sizeof(bf16);
    stash_live_ = true;
  }
  const int rows = tokens_, H = hidden_, F = ffn_;
  check_cuda(
      layer_norm_forward<bf16>(x_, ln1_gain_, ln1_bias_, ln1_, mean1_, rstd1_, rows, H, stream_),
      "layer_norm");
  linear(ln1_, w_qkv_, qkv_, rows, H, 3 * H);
  attention_forward(false);
  bf16 *projection = allocate<bf16>(T * h);
  linear(attention_, w_proj_, projection, rows, H, H);
  check_cuda(cudaMemcpyAsync(x1_, x_, T * h * sizeof(bf16), cudaMemcpyDeviceToDevice, stream_),
             "copy");
  check_cuda(add_inplace(x1_, projection, static_cast<long long>(T * h), stream_), "add");
  release(projection);
  check_cuda(
      layer_norm_forward<bf16>(x1_, ln2_gain_, ln2_bias_, ln2_, mean2_, rstd2_, rows, H, stream_),
      "layer_norm");
  linear(ln2_, w_fc1_, fc1_out_, rows, H, F);
  check_cuda(bias_gelu_forward<bf16>(fc1_out_, fc1_bias_, gelu_, rows, F, stream_), "bias_gelu");
  linear(gelu_, w_fc2_, y_, rows, F, H);
  check_cuda(add_inplace(y_, x1_, static_cast<long long>(T * h), stream_), "add");
}

void GpuBlock::attention_backward() {
  const int h = hidden_, s = seq_, d = hidden_ / heads_;
  const long long square = static_cast<long long>(s) * s;
  const std::size_t scores = static_cast<std::size_t>(batch_) * heads_ * square;
  bf16 *d_attention = allocate<bf16>(static_cast<std::size_t>(tokens_) * h);
  linear_input_grad(d_proj_out_, w_proj_, d_attention, tokens_, h, h);
  bf16 *d_probabilities = allocate<bf16>(scores);
  float *d_scores = allocate<float>(scores);
  bf16 *d_scores_bf16 = allocate<bf16>(scores);
  for (int b = 0; b < batch_; ++b) {
    const long long token0 = static_cast<long long>(b) * s;
    const bf16 *v = qkv_ + token0 * 3 * h + 2 * h;
    bf16 *dv = d_qkv_ + token0 * 3 * h + 2 * h;
    const bf16 *d_out = d_attention + token0 * h;
    const bf16 *p = probabilities_ + b * heads_ * square;
    // dP[s,s] = dO V^T = column-major dP^T = V dO^T.
    gemm(true, false, s, s, d, v, 3 * h, d, d_out, h, d, d_probabilities + b * heads_ * square, s,
         square, heads_, CUDA_R_16BF);
    // dV[s,d] = P^T dO = column-major dV^T = dO^T P.
    gemm(false, true, d, s, s, d_out, h, d, p, s, square, dv, 3 * h, d, heads_, CUDA_R_16BF);
  }
  check_cuda(causal_softmax_backward<bf16>(probabilities_, d_probabilities, d_scores,
                                           batch_ * heads_, s,
                                           1.0f / std::sqrt(static_cast<float>(d)), stream_),
             "causal_softmax_backward");
  check_cuda(float_to_bf16(d_scores, d_scores_bf16, static_cast<long long>(scores), stream_),
             "float_to_bf16");
  for (int b = 0; b < batch_; ++b) {
    const long long token0 = static_cast<long long>(b) * s;
    const bf16 *q = qkv_ + token0 * 3 * h, *k = q + h;
    bf16 *dq = d_qkv_ + token0 * 3 * h, *dk = dq + h;
    const bf16 *ds = d_scores_bf16 + b * heads_ * square;
    // dQ[s,d] = dS K = column-major dQ^T = K^T dS^T.
    gemm(false, false, d, s, s, k, 3 * h, d, ds, s, square, dq, 3 * h, d, heads_, CUDA_R_16BF);
    // dK[s,d] = dS^T Q = column-major dK^T = Q^T dS.
    gemm(false, true, d, s, s, q, 3 * h, d, ds, s, square, dk, 3 * h, d, heads_, CUDA_R_16BF);
  }
  release(d_scores_bf16);
  release(d_scores);
  release(d_probabilities);
  release(d_attention);
}

void GpuBlock::backward_input() {
  PPSIM_ASSERT(stash_live_);
  const std::size_t h = hidden_, f = ffn_, T = tokens_;
  const int rows = tokens_, H = hidden_, F = ffn_;
  d_qkv_ = allocate<bf16>(T * 3 * h);
  d_proj_out_ = allocate<bf16>(T * h);
  d_fc1_out_ = allocate<bf16>(T * f);
  bf16 *d_gelu = allocate<bf16>(T * f);
  linear_input_grad(dy_, w_fc2_, d_gelu, rows, F, H);
  check_cuda(
      gelu_backward<bf16>(fc1_out_, d_gelu, d_fc1_out_, static_cast<long long>(T * f), stream_),
      "gelu_backward");
  release(d_gelu);
  bf16 *d_ln2 = allocate<bf16>(T * h);
  linear_input_grad(d_fc1_out_, w_fc1_, d_ln2, rows, H, F);
  check_cuda(layer_norm_backward_input<bf16>(x1_, ln2_gain_, mean2_, rstd2_, d_ln2, d_proj_out_,
                                             rows, H, stream_),
             "layer_norm_backward");
  check_cuda(add_inplace(d_proj_out_, dy_, static_cast<long long>(T * h), stream_),
             "add"); // residual
  release(d_ln2);
  attention_backward();
  bf16 *d_ln1 = allocate<bf16>(T * h);
  linear_input_grad(d_qkv_, w_qkv_, d_ln1, rows, H, 3 * H);
  check_cuda(
      layer_norm_backward_input<bf16>(x_, ln1_gain_, mean1_, rstd1_, d_ln1, dx_, rows, H, stream_),
      "layer_norm_backward");
  check_cuda(add_inplace(dx_, d_proj_out_, static_cast<long long>(T * h), stream_),
             "add"); // residual
  release(d_ln1);
  // What W does not need leaves now (Zero Bubble: B frees the stash except W's inputs).
  for (const void *pointer :
       {static_cast<const void *>(qkv_), static_cast<const void *>(probabilities_),
        static_cast<const void *>(x1_), static_cast<const void *>(fc1_out_),
        static_cast<const void *>(mean1_), static_cast<const void *>(rstd1_),
        static_cast<const void *>(mean2_), static_cast<const void *>(rstd2_)}) {
    release(pointer);
  }
  stash_live_ = false;
  weight_stash_live_ = true;
}

void GpuBlock::backward_weight() {
  PPSIM_ASSERT(weight_stash_live_);
  const int rows = tokens_, H = hidden_, F = ffn_;
  linear_weight_grad(ln1_, d_qkv_, g_qkv_, rows, H, 3 * H);
  linear_weight_grad(attention_, d_proj_out_, g_proj_, rows, H, H);
  linear_weight_grad(ln2_, d_fc1_out_, g_fc1_, rows, H, F);
  linear_weight_grad(gelu_, dy_, g_fc2_, rows, F, H);
  for (const void *pointer :
       {static_cast<const void *>(ln1_), static_cast<const void *>(attention_),
        static_cast<const void *>(ln2_), static_cast<const void *>(gelu_),
        static_cast<const void *>(d_qkv_), static_cast<const void *>(d_proj_out_),
        static_cast<const void *>(d_fc1_out_)}) {
    release(pointer);
  }
  weight_stash_live_ = false;
}

void GpuBlock::run(GpuPass pass) {
  switch (pass) {
  case GpuPass::forward:
  case GpuPass::recompute_full:
    forward(false);
    break;
  case GpuPass::recompute_selective:
    forward(true);
    break;
  case GpuPass::backward_input:
    backward_input();
    break;
  case GpuPass::backward_weight:
    backward_weight();
    break;
  case GpuPass::backward_total:
    backward_input();
    backward_weight();
    break;
  }
}

} // namespace ppsim::profiler::gpu
