#include "profiler/cuda/block_kernels.h"

#include <cmath>

namespace ppsim::profiler::gpu {
namespace {

constexpr int kThreads = 256;
constexpr float kGeluScale = 0.7978845608028654f; // sqrt(2 / pi)

__device__ float to_float(float value) { return value; }
__device__ float to_float(__nv_bfloat16 value) { return __bfloat162float(value); }
template <typename T> __device__ T from_float(float value);
template <> __device__ float from_float<float>(float value) { return value; }
template <> __device__ __nv_bfloat16 from_float<__nv_bfloat16>(float value) {
  return __float2bfloat16(value);
}

// Sum over the block; every thread gets the result.
__device__ float block_sum(float value) {
  __shared__ float partial[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0)
    partial[warp] = value;
  __syncthreads();
  float total = 0;
  for (int i = 0; i < kThreads / 32; ++i)
    total += partial[i];
  return total;
}

__device__ float block_max(float value) {
  __shared__ float partial[kThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2)
    value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0)
    partial[warp] = value;
  __syncthreads();
  float result = -INFINITY;
  for (int i = 0; i < kThreads / 32; ++i)
    result = fmaxf(result, partial[i]);
  return result;
}

template <typename T>
__global__ void layer_norm_forward_kernel(const T *x, const float *gain, const float *bias, T *y,
                                          float *mean_out, float *rstd_out, int h) {
  const long long row = blockIdx.x;
  const T *in = x + row * h;
  float sum = 0;
  for (int j = threadIdx.x; j < h; j += kThreads)
    sum += to_float(in[j]);
  const float mean = block_sum(sum) / h;
  float squares = 0;
  for (int j = threadIdx.x; j < h; j += kThreads) {
    const float centered = to_float(in[j]) - mean;
    squares += centered * centered;
  }
  const float rstd = rsqrtf(block_sum(squares) / h + 1e-5f);
  for (int j = threadIdx.x; j < h; j += kThreads) {
    y[row * h + j] = from_float<T>((to_float(in[j]) - mean) * rstd * gain[j] + bias[j]);
  }
  if (threadIdx.x == 0) {
    mean_out[row] = mean;
    rstd_out[row] = rstd;
  }
}

template <typename T>
__global__ void layer_norm_backward_kernel(const T *x, const float *gain, const float *mean,
                                           const float *rstd, const T *dy, T *dx, int h) {
  const long long row = blockIdx.x;
  float sum_dxhat = 0, sum_dxhat_xhat = 0;
  for (int j = threadIdx.x; j < h; j += kThreads) {
    const float xhat = (to_float(x[row * h + j]) - mean[row]) * rstd[row];
    const float dxhat = to_float(dy[row * h + j]) * gain[j];
    sum_dxhat += dxhat;
    sum_dxhat_xhat += dxhat * xhat;
  }
  const float mean_dxhat = block_sum(sum_dxhat) / h;
  const float mean_dxhat_xhat = block_sum(sum_dxhat_xhat) / h;
  for (int j = threadIdx.x; j < h; j += kThreads) {
    const float xhat = (to_float(x[row * h + j]) - mean[row]) * rstd[row];
    const float dxhat = to_float(dy[row * h + j]) * gain[j];
    dx[row * h + j] = from_float<T>(rstd[row] * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat));
  }
}

__device__ float gelu(float u) {
  return 0.5f * u * (1 + tanhf(kGeluScale * (u + 0.044715f * u * u * u)));
}

template <typename T>
__global__ void bias_gelu_forward_kernel(T *u, const float *bias, T *y, int cols, long long count) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float value = to_float(u[i]) + bias[i % cols];
    u[i] = from_float<T>(value);
    y[i] = from_float<T>(gelu(value));
  }
}

template <typename T>
__global__ void gelu_backward_kernel(const T *u, const T *dy, T *du, long long count) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float v = to_float(u[i]);
    const float t = tanhf(kGeluScale * (v + 0.044715f * v * v * v));
    const float derivative =
        0.5f * (1 + t) + 0.5f * v * (1 - t * t) * kGeluScale * (1 + 3 * 0.044715f * v * v);
    du[i] = from_float<T>(to_float(dy[i]) * derivative);
  }
}

// One block per row i of one matrix; columns j > i are masked (probability 0).
template <typename T>
__global__ void causal_softmax_forward_kernel(const float *scores, T *p, int seq, float scale) {
  const long long row = blockIdx.x;
  const int i = static_cast<int>(row % seq);
  const float *in = scores + row * seq;
  float maximum = -INFINITY;
  for (int j = threadIdx.x; j <= i; j += kThreads)
    maximum = fmaxf(maximum, in[j] * scale);
  maximum = block_max(maximum);
  float sum = 0;
  for (int j = threadIdx.x; j <= i; j += kThreads)
    sum += __expf(in[j] * scale - maximum);
  sum = block_sum(sum);
  for (int j = threadIdx.x; j < seq; j += kThreads) {
    p[row * seq + j] = from_float<T>(j <= i ? __expf(in[j] * scale - maximum) / sum : 0.0f);
  }
}

template <typename T>
__global__ void causal_softmax_backward_kernel(const T *p, const T *dp, float *ds, int seq,
                                               float scale) {
  const long long row = blockIdx.x;
  float weighted = 0;
  for (int j = threadIdx.x; j < seq; j += kThreads)
    weighted += to_float(dp[row * seq + j]) * to_float(p[row * seq + j]);
  weighted = block_sum(weighted);
  for (int j = threadIdx.x; j < seq; j += kThreads) {
    ds[row * seq + j] =
        scale * to_float(p[row * seq + j]) * (to_float(dp[row * seq + j]) - weighted);
  }
}

__global__ void float_to_bf16_kernel(const float *in, __nv_bfloat16 *out, long long count) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    out[i] = __float2bfloat16(in[i]);
  }
}

__global__ void add_inplace_kernel(__nv_bfloat16 *out, const __nv_bfloat16 *in, long long count) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    out[i] = __float2bfloat16(__bfloat162float(out[i]) + __bfloat162float(in[i]));
  }
}

int grid_for(long long count) {
  const long long blocks = (count + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65535 ? (blocks > 0 ? blocks : 1) : 65535);
}

} // namespace

template <typename T>
cudaError_t layer_norm_forward(const T *x, const float *gain, const float *bias, T *y, float *mean,
                               float *rstd, int rows, int h, cudaStream_t stream) {
  layer_norm_forward_kernel<<<rows, kThreads, 0, stream>>>(x, gain, bias, y, mean, rstd, h);
  return cudaGetLastError();
}

template <typename T>
cudaError_t layer_norm_backward_input(const T *x, const float *gain, const float *mean,
                                      const float *rstd, const T *dy, T *dx, int rows, int h,
                                      cudaStream_t stream) {
  layer_norm_backward_kernel<<<rows, kThreads, 0, stream>>>(x, gain, mean, rstd, dy, dx, h);
  return cudaGetLastError();
}

template <typename T>
cudaError_t bias_gelu_forward(T *u, const float *bias, T *y, int rows, int cols,
                              cudaStream_t stream) {
  const long long count = static_cast<long long>(rows) * cols;
  bias_gelu_forward_kernel<<<grid_for(count), kThreads, 0, stream>>>(u, bias, y, cols, count);
  return cudaGetLastError();
}

template <typename T>
cudaError_t gelu_backward(const T *u, const T *dy, T *du, long long count, cudaStream_t stream) {
  gelu_backward_kernel<<<grid_for(count), kThreads, 0, stream>>>(u, dy, du, count);
  return cudaGetLastError();
}

template <typename T>
cudaError_t causal_softmax_forward(const float *scores, T *p, int matrices, int seq, float scale,
                                   cudaStream_t stream) {
  causal_softmax_forward_kernel<<<matrices * seq, kThreads, 0, stream>>>(scores, p, seq, scale);
  return cudaGetLastError();
}

template <typename T>
cudaError_t causal_softmax_backward(const T *p, const T *dp, float *ds, int matrices, int seq,
                                    float scale, cudaStream_t stream) {
  causal_softmax_backward_kernel<<<matrices * seq, kThreads, 0, stream>>>(p, dp, ds, seq, scale);
  return cudaGetLastError();
}

cudaError_t add_inplace(__nv_bfloat16 *out, const __nv_bfloat16 *in, long long count,
                        cudaStream_t stream) {
  add_inplace_kernel<<<grid_for(count), kThreads, 0, stream>>>(out, in, count);
  return cudaGetLastError();
}

cudaError_t float_to_bf16(const float *in, __nv_bfloat16 *out, long long count,
                          cudaStream_t stream) {
  float_to_bf16_kernel<<<grid_for(count), kThreads, 0, stream>>>(in, out, count);
  return cudaGetLastError();
}

#define PPSIM_INSTANTIATE(T)                                                                       \
  template cudaError_t layer_norm_forward<T>(const T *, const float *, const float *, T *,         \
                                             float *, float *, int, int, cudaStream_t);            \
  template cudaError_t layer_norm_backward_input<T>(const T *, const float *, const float *,       \
                                                    const float *, const T *, T *, int, int,       \
                                                    cudaStream_t);                                 \
  template cudaError_t bias_gelu_forward<T>(T *, const float *, T *, int, int, cudaStream_t);      \
  template cudaError_t gelu_backward<T>(const T *, const T *, T *, long long, cudaStream_t);       \
  template cudaError_t causal_softmax_forward<T>(const float *, T *, int, int, float,              \
                                                 cudaStream_t);                                    \
  template cudaError_t causal_softmax_backward<T>(const T *, const T *, float *, int, int, float,  \
                                                  cudaStream_t);
PPSIM_INSTANTIATE(float)
PPSIM_INSTANTIATE(__nv_bfloat16)
#undef PPSIM_INSTANTIATE

} // namespace ppsim::profiler::gpu
