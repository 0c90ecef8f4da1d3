#pragma once
// The GPT block on the GPU (docs/profiler.md, "Modules"): bf16 activations and weights, fp32
// LayerNorm parameters and biases, matmuls on cuBLASLt with a fixed workspace, small kernels from
// block_kernels.cu. Passes F, B, W, BW (= B then W), R_full (F again from the kept input) and R_sel
// (the attention core again). All memory comes from one Arena over one cudaMalloc made before
// timing; the stash lives from F to B, the W stash from B to W. This header and gpu_block.cu stay
// C++17 (what CMake 3.25 can ask of nvcc): plain sizes in, no ppsim C++20 types.
#include "profiler/arena.h"

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace ppsim::profiler::gpu {

/// Throws Error naming the call when a CUDA runtime or cuBLASLt call fails.
void check_cuda(cudaError_t status, const char *what);
void check_cublas(cublasStatus_t status, const char *what);

/// The GPT block's sizes (tp 1).
struct GpuBlockShape {
  int batch = 1, seq = 0, hidden = 0, heads = 0, ffn = 0;
};

/// The passes, numbered as profiler::Pass.
enum class GpuPass {
  forward = 1,
  backward_input,
  backward_weight,
  backward_total,
  recompute_full,
  recompute_selective
};

class GpuBlock {
public:
  /// Allocates weights from `arena` (based at `base`) and initialises them.
  GpuBlock(const GpuBlockShape &shape, Arena &arena, char *base, cublasLtHandle_t handle,
           cudaStream_t stream);
  /// Runs one pass on the stream (asynchronously).
  void run(GpuPass pass);
  /// Bytes the forward pass keeps (the stash), measured by the arena.
  [[nodiscard]] std::size_t stash_bytes() const { return stash_bytes_; }

private:
  template <typename T> T *allocate(std::size_t count);
  void release(const void *pointer);
  void forward(bool attention_core_only);
  void backward_input();
  void backward_weight();
  // Row-major Y[rows, n] = X[rows, k] W[k, n] and its two gradients, on cuBLASLt.
  void linear(const __nv_bfloat16 *x, const __nv_bfloat16 *w, __nv_bfloat16 *y, int rows, int k,
              int n);
  void linear_input_grad(const __nv_bfloat16 *dy, const __nv_bfloat16 *w, __nv_bfloat16 *dx,
                         int rows, int k, int n);
  void linear_weight_grad(const __nv_bfloat16 *x, const __nv_bfloat16 *dy, __nv_bfloat16 *dw,
                          int rows, int k, int n);
  void attention_forward(bool core_only);
  void attention_backward();
  // One cuBLASLt call: D(m x n) = op(A) op(B), column-major, strided batches.
  void gemm(bool transpose_a, bool transpose_b, int m, int n, int k, const void *a, int lda,
            long long stride_a, const void *b, int ldb, long long stride_b, void *d, int ldd,
            long long stride_d, int batch, cudaDataType_t d_type);

  Arena &arena_;
  char *base_;
  cublasLtHandle_t handle_;
  cudaStream_t stream_;
  int tokens_, hidden_, ffn_, heads_, seq_, batch_;
  void *workspace_ = nullptr;
  std::size_t workspace_bytes_ = 32u << 20;
  // Weights (bf16) and fp32 vectors.
  __nv_bfloat16 *w_qkv_ = nullptr, *w_proj_ = nullptr, *w_fc1_ = nullptr, *w_fc2_ = nullptr;
  __nv_bfloat16 *g_qkv_ = nullptr, *g_proj_ = nullptr, *g_fc1_ = nullptr, *g_fc2_ = nullptr;
  float *ln1_gain_ = nullptr, *ln1_bias_ = nullptr, *ln2_gain_ = nullptr, *ln2_bias_ = nullptr;
  float *fc1_bias_ = nullptr;
  // Input, output and output gradient (owned across passes).
  __nv_bfloat16 *x_ = nullptr, *y_ = nullptr, *dy_ = nullptr, *dx_ = nullptr;
  // F -> B stash.
  __nv_bfloat16 *ln1_ = nullptr, *qkv_ = nullptr, *probabilities_ = nullptr, *attention_ = nullptr;
  __nv_bfloat16 *x1_ = nullptr, *ln2_ = nullptr, *fc1_out_ = nullptr, *gelu_ = nullptr;
  float *mean1_ = nullptr, *rstd1_ = nullptr, *mean2_ = nullptr, *rstd2_ = nullptr;
  // B -> W stash (output gradients; the inputs are ln1_, attention_, ln2_, gelu_).
  __nv_bfloat16 *d_qkv_ = nullptr, *d_proj_out_ = nullptr, *d_fc1_out_ = nullptr;
  bool stash_live_ = false, weight_stash_live_ = false;
  std::size_t stash_bytes_ = 0;
};

} // namespace ppsim::profiler::gpu
