// GPU kernels of the workload against double-precision CPU formulas (the same as the CPU
// reference block's). Needs a CUDA device: without one the program exits 77, which CTest reports
// as skipped (docs/profiler.md, "Testing without a GPU").
#define DOCTEST_CONFIG_IMPLEMENT
#include "profiler/cuda/block_kernels.h"

#include "profiler/reference_block.h"

#include <cmath>
#include <cstdio>
#include <doctest/doctest.h>
#include <numbers>
#include <vector>

namespace ppsim::profiler::gpu {
constexpr int kSkip = 77; // CTest's SKIP_RETURN_CODE

namespace {

template <typename T> struct DeviceBuffer {
  T *data = nullptr;
  explicit DeviceBuffer(const std::vector<T> &host) {
    REQUIRE(cudaMalloc(&data, host.size() * sizeof(T)) == cudaSuccess);
    REQUIRE(cudaMemcpy(data, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice) ==
            cudaSuccess);
  }
  explicit DeviceBuffer(std::size_t count) {
    REQUIRE(cudaMalloc(&data, count * sizeof(T)) == cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(data); }
  std::vector<T> read(std::size_t count) const {
    std::vector<T> host(count);
    REQUIRE(cudaMemcpy(host.data(), data, count * sizeof(T), cudaMemcpyDeviceToHost) ==
            cudaSuccess);
    return host;
  }
};

std::vector<float> to_float(const std::vector<double> &values) {
  return {values.begin(), values.end()};
}

} // namespace

TEST_CASE("layer norm forward and backward match the CPU formulas") {
  const int rows = 16, h = 300; // h above the block size exercises the strided loops
  const auto x = to_float(random_values(rows * h, 1));
  const auto gain = to_float(random_values(h, 2));
  const auto bias = to_float(random_values(h, 3));
  const auto dy = to_float(random_values(rows * h, 4));
  DeviceBuffer<float> dx_device(x), d_gain(gain), d_bias(bias), d_dy(dy), y(rows * h), mean(rows),
      rstd(rows), dx(rows * h);
  REQUIRE(layer_norm_forward<float>(dx_device.data, d_gain.data, d_bias.data, y.data, mean.data,
                                    rstd.data, rows, h, nullptr) == cudaSuccess);
  REQUIRE(layer_norm_backward_input<float>(dx_device.data, d_gain.data, mean.data, rstd.data,
                                           d_dy.data, dx.data, rows, h, nullptr) == cudaSuccess);
  const auto y_host = y.read(rows * h);
  const auto dx_host = dx.read(rows * h);
  for (int r = 0; r < rows; ++r) {
    double m = 0, v = 0;
    for (int j = 0; j < h; ++j)
      m += x[r * h + j];
    m /= h;
    for (int j = 0; j < h; ++j)
      v += (x[r * h + j] - m) * (x[r * h + j] - m);
    const double s = 1 / std::sqrt(v / h + 1e-5);
    double mean_dxhat = 0, mean_dxhat_xhat = 0;
    for (int j = 0; j < h; ++j) {
      const double xhat = (x[r * h + j] - m) * s;
      CHECK(y_host[r * h + j] == doctest::Approx(xhat * gain[j] + bias[j]).epsilon(1e-4));
      mean_dxhat += dy[r * h + j] * gain[j] / h;
      mean_dxhat_xhat += dy[r * h + j] * gain[j] * xhat / h;
    }
    for (int j = 0; j < h; ++j) {
      const double xhat = (x[r * h + j] - m) * s;
      const double expected = s * (dy[r * h + j] * gain[j] - mean_dxhat - xhat * mean_dxhat_xhat);
      CHECK(dx_host[r * h + j] == doctest::Approx(expected).epsilon(1e-3));
    }
  }
}

TEST_CASE("causal softmax rows sum to one and vanish above the diagonal") {
  const int matrices = 3, seq = 40;
  const auto scores = to_float(random_values(matrices * seq * seq, 5));
  DeviceBuffer<float> d_scores(scores), p(matrices * seq * seq);
  REQUIRE(causal_softmax_forward<float>(d_scores.data, p.data, matrices, seq, 0.5f, nullptr) ==
          cudaSuccess);
  const auto p_host = p.read(matrices * seq * seq);
  for (int row = 0; row < matrices * seq; ++row) {
    const int i = row % seq;
    double maximum = -1e30, sum = 0;
    for (int j = 0; j <= i; ++j)
      maximum = std::max(maximum, 0.5 * scores[row * seq + j]);
    for (int j = 0; j <= i; ++j)
      sum += std::exp(0.5 * scores[row * seq + j] - maximum);
    for (int j = 0; j < seq; ++j) {
      const double expected = j <= i ? std::exp(0.5 * scores[row * seq + j] - maximum) / sum : 0.0;
      CHECK(p_host[row * seq + j] == doctest::Approx(expected).epsilon(1e-4));
    }
  }
}

TEST_CASE("bias + GeLU and its backward match the tanh approximation") {
  const int rows = 8, cols = 70;
  const auto u = to_float(random_values(rows * cols, 6));
  const auto bias = to_float(random_values(cols, 7));
  const auto dy = to_float(random_values(rows * cols, 8));
  DeviceBuffer<float> d_u(u), d_bias(bias), d_dy(dy), y(rows * cols), du(rows * cols);
  REQUIRE(bias_gelu_forward<float>(d_u.data, d_bias.data, y.data, rows, cols, nullptr) ==
          cudaSuccess);
  REQUIRE(gelu_backward<float>(d_u.data, d_dy.data, du.data, rows * cols, nullptr) == cudaSuccess);
  const auto y_host = y.read(rows * cols);
  const auto du_host = du.read(rows * cols);
  const double c = std::sqrt(2 / std::numbers::pi);
  for (int i = 0; i < rows * cols; ++i) {
    const double v = u[i] + bias[i % cols];
    const double t = std::tanh(c * (v + 0.044715 * v * v * v));
    CHECK(y_host[i] == doctest::Approx(0.5 * v * (1 + t)).epsilon(1e-4));
    const double derivative =
        0.5 * (1 + t) + 0.5 * v * (1 - t * t) * c * (1 + 3 * 0.044715 * v * v);
    CHECK(du_host[i] == doctest::Approx(dy[i] * derivative).epsilon(1e-3));
  }
}

} // namespace ppsim::profiler::gpu

int main(int argc, char **argv) {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    std::printf("no CUDA device (%s): GPU kernel comparison skipped\n",
                status != cudaSuccess ? cudaGetErrorName(status) : "0 devices");
    return ppsim::profiler::gpu::kSkip;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
