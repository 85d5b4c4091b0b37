#include <gtest/gtest.h>

#include <cmath>

#include "runtime/ops/op_tester.h"

namespace parity::testing {
namespace {

TEST(Loss, NegativeLogLikelihood) {
  // input (N=2, C=3), targets [0, 2].
  const std::vector<float> input = {-1, -2, -3, -4, -5, -6};
  OpTester("NegativeLogLikelihoodLoss", 13)
      .attr("reduction", "none")
      .input<float>({2, 3}, input)
      .input<int64_t>({2}, {0, 2})
      .output<float>({2}, {1, 6})
      .run();
  OpTester("NegativeLogLikelihoodLoss", 13)
      .input<float>({2, 3}, input)
      .input<int64_t>({2}, {0, 2})
      .input<float>({3}, {1, 1, 3})
      .output<float>({}, {(1 + 18) / 4.0f})
      .run();
  OpTester("NegativeLogLikelihoodLoss", 13)
      .attr("reduction", "sum")
      .attr("ignore_index", 2)
      .input<float>({2, 3}, input)
      .input<int64_t>({2}, {0, 2})
      .output<float>({}, {1})
      .run();
  OpTester("NegativeLogLikelihoodLoss", 13)
      .input<float>({2, 3}, input)
      .input<int64_t>({2}, {0, 3})
      .run_expect_error(ErrorCode::kRuntime);
}

TEST(Loss, NegativeLogLikelihoodSpatial) {
  // (N=1, C=2, d=2): loss[0][j] = -input[0][target[j]][j].
  OpTester("NegativeLogLikelihoodLoss", 13)
      .attr("reduction", "none")
      .input<float>({1, 2, 2}, {-1, -2, -3, -4})
      .input<int32_t>({1, 2}, {1, 0})
      .output<float>({1, 2}, {3, 2})
      .run();
}

TEST(Loss, SoftmaxCrossEntropyWithLogProb) {
  const float lse = std::log(std::exp(1.0f) + std::exp(2.0f));
  OpTester("SoftmaxCrossEntropyLoss", 13)
      .input<float>({1, 2}, {1, 2})
      .input<int64_t>({1}, {1})
      .output<float>({}, {lse - 2})
      .output<float>({1, 2}, {1 - lse, 2 - lse})
      .run();
  OpTester("SoftmaxCrossEntropyLoss", 13)
      .attr("reduction", "bogus")
      .input<float>({1, 2}, {1, 2})
      .input<int64_t>({1}, {1})
      .run_expect_error(ErrorCode::kInvalidModel);
}

constexpr const char* kTraining = "ai.onnx.preview.training";

TEST(Training, Adagrad) {
  // r = 0.1 / (1 + 0 * decay) ; g = 1 ; h_new = 1 + 1 ; x_new = 1 - 0.1 * 1 / (sqrt(2) + eps)
  OpTester("Adagrad", 1, kTraining)
      .attr("epsilon", 0.0f)
      .input<float>({}, {0.1f})
      .input<int64_t>({}, {0})
      .input<float>({1}, {1})
      .input<float>({1}, {1})
      .input<float>({1}, {1})
      .output<float>({1}, {1 - 0.1f / std::sqrt(2.0f)})
      .output<float>({1}, {2})
      .run();
}

TEST(Training, MomentumStandardAndNesterov) {
  OpTester("Momentum", 1, kTraining)
      .attr("alpha", 0.5f)
      .attr("beta", 0.1f)
      .attr("mode", "standard")
      .attr("norm_coefficient", 0.0f)
      .input<float>({}, {1})
      .input<int64_t>({}, {1})
      .input<float>({1}, {10})
      .input<float>({1}, {2})
      .input<float>({1}, {4})
      .output<float>({1}, {10 - (0.5f * 4 + 0.1f * 2)})
      .output<float>({1}, {0.5f * 4 + 0.1f * 2})
      .run();
  // T = 0: beta is replaced by 1.
  OpTester("Momentum", 1, kTraining)
      .attr("alpha", 0.5f)
      .attr("beta", 0.1f)
      .attr("mode", "nesterov")
      .attr("norm_coefficient", 0.0f)
      .input<float>({}, {1})
      .input<int64_t>({}, {0})
      .input<float>({1}, {10})
      .input<float>({1}, {2})
      .input<float>({1}, {4})
      .output<float>({1}, {10 - (2 + 0.5f * 4)})
      .output<float>({1}, {4})
      .run();
}

TEST(Training, Adam) {
  // T = 1: rate = r * sqrt(1 - beta) / (1 - alpha).
  const double alpha = 0.9, beta = 0.999;
  const double v = (1 - alpha) * 1, h = (1 - beta) * 1;
  const double rate = 0.1 * std::sqrt(1 - beta) / (1 - alpha);
  const double x = 1 - rate * v / (std::sqrt(h) + 1e-6);
  OpTester("Adam", 1, kTraining)
      .input<double>({}, {0.1})
      .input<int64_t>({}, {1})
      .input<double>({1}, {1})
      .input<double>({1}, {1})
      .input<double>({1}, {0})
      .input<double>({1}, {0})
      .output<double>({1}, {x})
      .output<double>({1}, {v})
      .output<double>({1}, {h})
      .run();
  OpTester("Adam", 1, kTraining).input<float>({}, {0.1f}).input<int64_t>({}, {1}).input<float>({1}, {1}).run_expect_error(
      ErrorCode::kInvalidModel);
}

TEST(Random, ShapesDtypesAndDeterminism) {
  auto draw = [](float seed) {
    return OpTester("RandomNormal", 1).attr("seed", seed).attr_ints("shape", {2, 3}).output_shape_only(DType::kFloat32, {2, 3}).run_outputs()[0];
  };
  Tensor a = draw(1.0f), b = draw(1.0f), c = draw(2.0f);
  EXPECT_TRUE(a.bit_equal(b));
  EXPECT_FALSE(a.bit_equal(c));
  Tensor u = OpTester("RandomUniform", 1)
                 .attr("seed", 3.0f)
                 .attr("low", 2.0f)
                 .attr("high", 3.0f)
                 .attr("dtype", static_cast<int64_t>(DType::kFloat64))
                 .attr_ints("shape", {1000})
                 .output_shape_only(DType::kFloat64, {1000})
                 .run_outputs()[0];
  double sum = 0;
  for (double v : u.values<double>()) {
    EXPECT_GE(v, 2.0);
    EXPECT_LT(v, 3.0);
    sum += v;
  }
  EXPECT_NEAR(sum / 1000, 2.5, 0.05);
  OpTester("RandomUniformLike", 1).input<float>({4}, {0, 0, 0, 0}).output_shape_only(DType::kFloat32, {4}).run();
  OpTester("RandomNormalLike", 1)
      .attr("dtype", static_cast<int64_t>(DType::kFloat64))
      .input<float>({2}, {0, 0})
      .output_shape_only(DType::kFloat64, {2})
      .run();
  // fp64 oracle mode turns float outputs into double.
  OpTester("RandomNormal", 1)
      .precision(runtime::Precision::kFloat64)
      .attr_ints("shape", {2})
      .output_shape_only(DType::kFloat64, {2})
      .run();
}

TEST(Random, BernoulliAndMultinomial) {
  OpTester("Bernoulli", 15)
      .attr("seed", 0.0f)
      .input<float>({4}, {0, 1, 0, 1})
      .output<float>({4}, {0, 1, 0, 1})
      .run();
  OpTester("Bernoulli", 15)
      .attr("dtype", static_cast<int64_t>(DType::kBool))
      .input<double>({2}, {0, 1})
      .output<bool>({2}, {false, true})
      .run();
  // A class with overwhelming logit is always drawn.
  OpTester("Multinomial", 7)
      .attr("sample_size", 5)
      .input<float>({2, 3}, {0, 100, 0, -100, -100, 0})
      .output<int32_t>({2, 5}, {1, 1, 1, 1, 1, 2, 2, 2, 2, 2})
      .run();
}

}  // namespace
}  // namespace parity::testing
