// CPU reference block (docs/profiler.md, "Testing without a GPU"): finite-difference gradient
// checks at b = 2, s = 8, h = 16, a = 2; the B -> W stash holds exactly Zero Bubble's 14 sbh inputs
// + 18 sbh gradients.
#include "profiler/reference_block.h"

#include "profiler/cost_model.h"

#include <cmath>
#include <doctest/doctest.h>
#include <functional>

namespace ppsim::profiler {
namespace {

const ReferenceShape kShape{};

double loss(const ReferenceWeights &weights, const std::vector<double> &x,
            const std::vector<double> &r) {
  ForwardStash stash;
  const std::vector<double> y = reference_forward(kShape, weights, x, stash);
  double total = 0;
  for (std::size_t i = 0; i < y.size(); ++i)
    total += y[i] * r[i];
  return total;
}

// Central difference of the loss in one coordinate of `values` (a copy is perturbed).
double numeric_derivative(const std::function<double(std::vector<double> &)> &evaluate,
                          std::vector<double> values, std::size_t index) {
  constexpr double step = 1e-5;
  const double original = values[index];
  values[index] = original + step;
  const double plus = evaluate(values);
  values[index] = original - step;
  const double minus = evaluate(values);
  return (plus - minus) / (2 * step);
}

struct Fixture {
  ReferenceWeights weights = random_weights(kShape, 11);
  std::vector<double> x = random_values(kShape.tokens() * kShape.hidden, 5);
  std::vector<double> r = random_values(kShape.tokens() * kShape.hidden, 6);
  ForwardStash stash;
  WeightStash weight_stash;
  ReferenceGrads grads;
  std::vector<double> dx;

  Fixture() {
    reference_forward(kShape, weights, x, stash);
    dx = reference_backward_input(kShape, weights, stash, r, weight_stash, grads);
    reference_backward_weight(kShape, weight_stash, grads);
  }
};

void check_close(double analytic, double numeric) {
  CHECK(std::abs(analytic - numeric) <= 1e-6 * std::max(1.0, std::abs(numeric)));
}

} // namespace

TEST_CASE("B: input gradients match finite differences") {
  Fixture fixture;
  const auto evaluate = [&](std::vector<double> &x) { return loss(fixture.weights, x, fixture.r); };
  for (std::size_t i = 0; i < fixture.x.size(); ++i) {
    check_close(fixture.dx[i], numeric_derivative(evaluate, fixture.x, i));
  }
}

TEST_CASE("B and W: every parameter's gradient matches finite differences") {
  Fixture fixture;
  const std::pair<std::vector<double> ReferenceWeights::*, std::vector<double> ReferenceGrads::*>
      pairs[] = {{&ReferenceWeights::ln1_gain, &ReferenceGrads::ln1_gain},
                 {&ReferenceWeights::ln1_bias, &ReferenceGrads::ln1_bias},
                 {&ReferenceWeights::qkv, &ReferenceGrads::qkv},
                 {&ReferenceWeights::qkv_bias, &ReferenceGrads::qkv_bias},
                 {&ReferenceWeights::proj, &ReferenceGrads::proj},
                 {&ReferenceWeights::proj_bias, &ReferenceGrads::proj_bias},
                 {&ReferenceWeights::ln2_gain, &ReferenceGrads::ln2_gain},
                 {&ReferenceWeights::ln2_bias, &ReferenceGrads::ln2_bias},
                 {&ReferenceWeights::fc1, &ReferenceGrads::fc1},
                 {&ReferenceWeights::fc1_bias, &ReferenceGrads::fc1_bias},
                 {&ReferenceWeights::fc2, &ReferenceGrads::fc2},
                 {&ReferenceWeights::fc2_bias, &ReferenceGrads::fc2_bias}};
  for (const auto &[weight, grad] : pairs) {
    const std::vector<double> &analytic = fixture.grads.*grad;
    REQUIRE(analytic.size() == (fixture.weights.*weight).size());
    const auto evaluate = [&, weight = weight](std::vector<double> &values) {
      ReferenceWeights perturbed = fixture.weights;
      perturbed.*weight = values;
      return loss(perturbed, fixture.x, fixture.r);
    };
    // Every 5th entry keeps the test fast and still touches each row and column.
    for (std::size_t i = 0; i < analytic.size(); i += 5) {
      check_close(analytic[i], numeric_derivative(evaluate, fixture.weights.*weight, i));
    }
  }
}

TEST_CASE("the B -> W stash is 14 sbh of inputs and 18 sbh of output gradients (bf16 bytes / 2)") {
  Fixture fixture;
  BlockShape shape;
  shape.batch = kShape.batch;
  shape.seq = kShape.seq;
  shape.hidden = kShape.hidden;
  shape.heads = kShape.heads;
  const ActivationBytes bytes = activation_bytes(shape);
  CHECK(2 * fixture.weight_stash.input_elements() == bytes.bwd_w_act);
  CHECK(2 * fixture.weight_stash.gradient_elements() == bytes.bwd_w_grad);
}

TEST_CASE("R: recomputing F from the stored input reproduces the stash exactly") {
  Fixture fixture;
  ForwardStash recomputed;
  reference_forward(kShape, fixture.weights, fixture.stash.x, recomputed);
  CHECK(recomputed.probabilities == fixture.stash.probabilities);
  CHECK(recomputed.gelu == fixture.stash.gelu);
  CHECK(recomputed.x1 == fixture.stash.x1);
}

TEST_CASE("attention is causal: later tokens do not change earlier outputs") {
  Fixture fixture;
  std::vector<double> x = fixture.x;
  const std::size_t h = kShape.hidden;
  for (std::size_t j = 0; j < h; ++j)
    x[(kShape.seq - 1) * h + j] += 0.5; // last token of batch 0
  ForwardStash stash;
  const std::vector<double> changed = reference_forward(kShape, fixture.weights, x, stash);
  ForwardStash original_stash;
  const std::vector<double> original =
      reference_forward(kShape, fixture.weights, fixture.x, original_stash);
  for (std::size_t i = 0; i < (kShape.seq - 1) * h; ++i)
    CHECK(changed[i] == original[i]);
  CHECK(changed[(kShape.seq - 1) * h] != original[(kShape.seq - 1) * h]);
}

} // namespace ppsim::profiler
