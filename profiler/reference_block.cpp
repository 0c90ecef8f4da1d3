#include "profiler/reference_block.h"

#include <cmath>
#include <random>

namespace ppsim::profiler {
namespace {

using Matrix = std::vector<double>;
constexpr double kEpsilon = 1e-5;

// c[rows, cols] = a[rows, inner] * b[inner, cols] (+ bias).
Matrix matmul(const Matrix &a, const Matrix &b, std::size_t rows, std::size_t inner,
              std::size_t cols, const Matrix *bias = nullptr) {
  Matrix c(rows * cols, 0.0);
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t k = 0; k < inner; ++k) {
      const double left = a[i * inner + k];
      for (std::size_t j = 0; j < cols; ++j)
        c[i * cols + j] += left * b[k * cols + j];
    }
    if (bias != nullptr) {
      for (std::size_t j = 0; j < cols; ++j)
        c[i * cols + j] += (*bias)[j];
    }
  }
  return c;
}

// dA = dC * B^T for C = A * B.
Matrix input_grad(const Matrix &dc, const Matrix &b, std::size_t rows, std::size_t inner,
                  std::size_t cols) {
  Matrix da(rows * inner, 0.0);
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t k = 0; k < inner; ++k) {
      double sum = 0;
      for (std::size_t j = 0; j < cols; ++j)
        sum += dc[i * cols + j] * b[k * cols + j];
      da[i * inner + k] = sum;
    }
  }
  return da;
}

// dB = A^T * dC, dbias = column sums of dC.
void weight_grad(const Matrix &a, const Matrix &dc, std::size_t rows, std::size_t inner,
                 std::size_t cols, Matrix &db, Matrix &dbias) {
  db.assign(inner * cols, 0.0);
  dbias.assign(cols, 0.0);
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t k = 0; k < inner; ++k) {
      const double left = a[i * inner + k];
      for (std::size_t j = 0; j < cols; ++j)
        db[k * cols + j] += left * dc[i * cols + j];
    }
    for (std::size_t j = 0; j < cols; ++j)
      dbias[j] += dc[i * cols + j];
  }
}

struct RowStatistics {
  double mean;
  double rstd; // 1 / sqrt(variance + epsilon)
};

// The mean and reciprocal standard deviation of one row of h values, as LayerNorm uses them.
RowStatistics row_statistics(const double *row, std::size_t h) {
  double mean = 0, variance = 0;
  for (std::size_t j = 0; j < h; ++j)
    mean += row[j];
  mean /= static_cast<double>(h);
  for (std::size_t j = 0; j < h; ++j)
    variance += (row[j] - mean) * (row[j] - mean);
  return {mean, 1.0 / std::sqrt(variance / static_cast<double>(h) + kEpsilon)};
}

Matrix layer_norm(const Matrix &x, const Matrix &gain, const Matrix &bias, std::size_t rows,
                  std::size_t h) {
  Matrix y(x.size());
  for (std::size_t i = 0; i < rows; ++i) {
    const auto [mean, rstd] = row_statistics(&x[i * h], h);
    for (std::size_t j = 0; j < h; ++j)
      y[i * h + j] = (x[i * h + j] - mean) * rstd * gain[j] + bias[j];
  }
  return y;
}

// LayerNorm backward from its input x (recomputing mean and rstd, as kernels do from the stash).
Matrix layer_norm_backward(const Matrix &x, const Matrix &gain, const Matrix &dy, std::size_t rows,
                           std::size_t h, Matrix &dgain, Matrix &dbias) {
  Matrix dx(x.size());
  dgain.assign(h, 0.0);
  dbias.assign(h, 0.0);
  std::vector<double> xhat(h), dxhat(h);
  for (std::size_t i = 0; i < rows; ++i) {
    const auto [mean, rstd] = row_statistics(&x[i * h], h);
    double mean_dxhat = 0, mean_dxhat_xhat = 0;
    for (std::size_t j = 0; j < h; ++j) {
      xhat[j] = (x[i * h + j] - mean) * rstd;
      dxhat[j] = dy[i * h + j] * gain[j];
      dgain[j] += dy[i * h + j] * xhat[j];
      dbias[j] += dy[i * h + j];
      mean_dxhat += dxhat[j];
      mean_dxhat_xhat += dxhat[j] * xhat[j];
    }
    mean_dxhat /= static_cast<double>(h);
    mean_dxhat_xhat /= static_cast<double>(h);
    for (std::size_t j = 0; j < h; ++j) {
      dx[i * h + j] = rstd * (dxhat[j] - mean_dxhat - xhat[j] * mean_dxhat_xhat);
    }
  }
  return dx;
}

// GeLU, tanh approximation (Hendrycks and Gimpel 2016), as Megatron uses.
constexpr double kGeluScale = 0.7978845608028654; // sqrt(2 / pi)
double gelu(double u) { return 0.5 * u * (1 + std::tanh(kGeluScale * (u + 0.044715 * u * u * u))); }
double gelu_derivative(double u) {
  const double t = std::tanh(kGeluScale * (u + 0.044715 * u * u * u));
  return 0.5 * (1 + t) + 0.5 * u * (1 - t * t) * kGeluScale * (1 + 3 * 0.044715 * u * u);
}

Matrix add(const Matrix &a, const Matrix &b) {
  Matrix c(a.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    c[i] = a[i] + b[i];
  return c;
}

} // namespace

std::size_t WeightStash::input_elements() const {
  return ln1.size() + attention.size() + ln2.size() + gelu.size();
}
std::size_t WeightStash::gradient_elements() const {
  return d_qkv.size() + d_proj_out.size() + d_fc1_out.size() + d_fc2_out.size();
}

std::vector<double> random_values(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::vector<double> values(count);
  for (double &value : values) {
    value = static_cast<double>(generator() >> 11) / static_cast<double>(1ULL << 53) * 2 - 1;
  }
  return values;
}

ReferenceWeights random_weights(const ReferenceShape &shape, std::uint64_t seed) {
  const std::size_t h = shape.hidden, f = shape.ffn;
  const auto scaled = [](std::vector<double> values, double scale, double offset = 0) {
    for (double &value : values)
      value = value * scale + offset;
    return values;
  };
  ReferenceWeights w;
  w.ln1_gain = scaled(random_values(h, seed + 1), 0.1, 1.0);
  w.ln1_bias = scaled(random_values(h, seed + 2), 0.1);
  w.qkv = scaled(random_values(h * 3 * h, seed + 3), 0.3);
  w.qkv_bias = scaled(random_values(3 * h, seed + 4), 0.1);
  w.proj = scaled(random_values(h * h, seed + 5), 0.3);
  w.proj_bias = scaled(random_values(h, seed + 6), 0.1);
  w.ln2_gain = scaled(random_values(h, seed + 7), 0.1, 1.0);
  w.ln2_bias = scaled(random_values(h, seed + 8), 0.1);
  w.fc1 = scaled(random_values(h * f, seed + 9), 0.3);
  w.fc1_bias = scaled(random_values(f, seed + 10), 0.1);
  w.fc2 = scaled(random_values(f * h, seed + 11), 0.3);
  w.fc2_bias = scaled(random_values(h, seed + 12), 0.1);
  return w;
}

std::vector<double> reference_forward(const ReferenceShape &shape, const ReferenceWeights &w,
                                      const std::vector<double> &x, ForwardStash &stash) {
  const std::size_t T = shape.tokens(), h = shape.hidden, f = shape.ffn, s = shape.seq;
  const std::size_t heads = shape.heads, d = h / heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  stash.x = x;
  stash.ln1 = layer_norm(x, w.ln1_gain, w.ln1_bias, T, h);
  const Matrix qkv = matmul(stash.ln1, w.qkv, T, h, 3 * h, &w.qkv_bias);
  stash.q.assign(T * h, 0);
  stash.k.assign(T * h, 0);
  stash.v.assign(T * h, 0);
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t j = 0; j < h; ++j) {
      stash.q[t * h + j] = qkv[t * 3 * h + j];
      stash.k[t * h + j] = qkv[t * 3 * h + h + j];
      stash.v[t * h + j] = qkv[t * 3 * h + 2 * h + j];
    }
  }
  // probabilities[b][head][i][j], causal: j <= i.
  stash.probabilities.assign(shape.batch * heads * s * s, 0.0);
  stash.attention.assign(T * h, 0.0);
  for (std::size_t b = 0; b < shape.batch; ++b) {
    for (std::size_t head = 0; head < heads; ++head) {
      double *p = &stash.probabilities[((b * heads + head) * s) * s];
      for (std::size_t i = 0; i < s; ++i) {
        double maximum = -INFINITY;
        for (std::size_t j = 0; j <= i; ++j) {
          double dot = 0;
          for (std::size_t c = 0; c < d; ++c) {
            dot +=
                stash.q[(b * s + i) * h + head * d + c] * stash.k[(b * s + j) * h + head * d + c];
          }
          p[i * s + j] = dot * scale;
          maximum = std::max(maximum, p[i * s + j]);
        }
        double sum = 0;
        for (std::size_t j = 0; j <= i; ++j)
          sum += (p[i * s + j] = std::exp(p[i * s + j] - maximum));
        for (std::size_t j = 0; j <= i; ++j)
          p[i * s + j] /= sum;
        for (std::size_t c = 0; c < d; ++c) {
          double value = 0;
          for (std::size_t j = 0; j <= i; ++j)
            value += p[i * s + j] * stash.v[(b * s + j) * h + head * d + c];
          stash.attention[(b * s + i) * h + head * d + c] = value;
        }
      }
    }
  }
  stash.x1 = add(x, matmul(stash.attention, w.proj, T, h, h, &w.proj_bias));
  stash.ln2 = layer_norm(stash.x1, w.ln2_gain, w.ln2_bias, T, h);
  stash.fc1_out = matmul(stash.ln2, w.fc1, T, h, f, &w.fc1_bias);
  stash.gelu.resize(stash.fc1_out.size());
  for (std::size_t i = 0; i < stash.gelu.size(); ++i)
    stash.gelu[i] = gelu(stash.fc1_out[i]);
  return add(stash.x1, matmul(stash.gelu, w.fc2, T, f, h, &w.fc2_bias));
}

std::vector<double> reference_backward_input(const ReferenceShape &shape, const ReferenceWeights &w,
                                             const ForwardStash &stash,
                                             const std::vector<double> &dy, WeightStash &out,
                                             ReferenceGrads &grads) {
  const std::size_t T = shape.tokens(), h = shape.hidden, f = shape.ffn, s = shape.seq;
  const std::size_t heads = shape.heads, d = h / heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  // MLP: y = x1 + gelu(ln2 W1 + c1) W2 + c2.
  out.d_fc2_out = dy;
  const Matrix d_gelu = input_grad(dy, w.fc2, T, f, h);
  out.d_fc1_out.resize(d_gelu.size());
  for (std::size_t i = 0; i < d_gelu.size(); ++i)
    out.d_fc1_out[i] = d_gelu[i] * gelu_derivative(stash.fc1_out[i]);
  const Matrix d_ln2 = input_grad(out.d_fc1_out, w.fc1, T, h, f);
  const Matrix dx1 = add(
      dy, layer_norm_backward(stash.x1, w.ln2_gain, d_ln2, T, h, grads.ln2_gain, grads.ln2_bias));
  // Attention: x1 = x + attention Wo + bo.
  out.d_proj_out = dx1;
  const Matrix d_attention = input_grad(dx1, w.proj, T, h, h);
  out.d_qkv.assign(T * 3 * h, 0.0);
  std::vector<double> dp(s);
  for (std::size_t b = 0; b < shape.batch; ++b) {
    for (std::size_t head = 0; head < heads; ++head) {
      const double *p = &stash.probabilities[((b * heads + head) * s) * s];
      for (std::size_t i = 0; i < s; ++i) {
        const std::size_t row = b * s + i;
        double weighted = 0;
        for (std::size_t j = 0; j <= i; ++j) {
          double dot = 0; // dP = dO V^T
          for (std::size_t c = 0; c < d; ++c) {
            dot += d_attention[row * h + head * d + c] * stash.v[(b * s + j) * h + head * d + c];
          }
          dp[j] = dot;
          weighted += dot * p[i * s + j];
        }
        for (std::size_t j = 0; j <= i; ++j) {
          const double d_score = p[i * s + j] * (dp[j] - weighted) * scale; // softmax backward
          const std::size_t column = b * s + j;
          for (std::size_t c = 0; c < d; ++c) {
            out.d_qkv[row * 3 * h + head * d + c] += d_score * stash.k[column * h + head * d + c];
            out.d_qkv[column * 3 * h + h + head * d + c] +=
                d_score * stash.q[row * h + head * d + c];
            out.d_qkv[column * 3 * h + 2 * h + head * d + c] +=
                p[i * s + j] * d_attention[row * h + head * d + c]; // dV = P^T dO
          }
        }
      }
    }
  }
  const Matrix d_ln1 = input_grad(out.d_qkv, w.qkv, T, h, 3 * h);
  const Matrix dx = add(
      dx1, layer_norm_backward(stash.x, w.ln1_gain, d_ln1, T, h, grads.ln1_gain, grads.ln1_bias));
  out.ln1 = stash.ln1;
  out.attention = stash.attention;
  out.ln2 = stash.ln2;
  out.gelu = stash.gelu;
  return dx;
}

void reference_backward_weight(const ReferenceShape &shape, const WeightStash &stash,
                               ReferenceGrads &grads) {
  const std::size_t T = shape.tokens(), h = shape.hidden, f = shape.ffn;
  weight_grad(stash.ln1, stash.d_qkv, T, h, 3 * h, grads.qkv, grads.qkv_bias);
  weight_grad(stash.attention, stash.d_proj_out, T, h, h, grads.proj, grads.proj_bias);
  weight_grad(stash.ln2, stash.d_fc1_out, T, h, f, grads.fc1, grads.fc1_bias);
  weight_grad(stash.gelu, stash.d_fc2_out, T, f, h, grads.fc2, grads.fc2_bias);
}

} // namespace ppsim::profiler
