// Spec: https://onnx.ai/onnx/operators/onnx__Sigmoid.html, onnx__Mul.html (Swish = x * Sigmoid(alpha * x))
// The vectorized in-place Swish that convolutions apply to their output slices
// (runtime/ops/nn/swish_fast.h), against the formula in double precision.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "support/test_support.h"
#include "runtime/ops/nn/swish_fast.h"

namespace parity::testing {
namespace {

double swish_exact(double x, double alpha) { return x / (1.0 + std::exp(-alpha * x)); }

/// On every tier the test process runs (the AVX-512 loop and the scalar one).
void expect_swish(const std::vector<float>& input, float alpha) {
  for (const runtime::KernelIsa isa : tested_kernel_isas()) {
    std::vector<float> values = input;
    runtime::nn::swish_in_place(values.data(), static_cast<int64_t>(values.size()), alpha, isa);
    for (size_t i = 0; i < values.size(); ++i) {
      const double want = swish_exact(input[i], alpha);
      EXPECT_NEAR(values[i], want, 2e-6 * std::abs(want) + 1e-30)
          << "x=" << input[i] << " alpha=" << alpha << " at " << i << ", isa " << runtime::kernel_isa_name(isa);
    }
  }
}

TEST(SwishFast, RandomValuesEveryTailLength) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-12.f, 12.f);
  for (int n = 0; n <= 70; ++n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = dist(rng);
    expect_swish(v, 1.0f);
  }
}

TEST(SwishFast, OtherAlphasAndWideRange) {
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> dist(-100.f, 100.f);
  std::vector<float> v(1000);
  for (float& x : v) x = dist(rng);
  for (float alpha : {1.0f, 1.702f, 0.5f, -1.0f}) expect_swish(v, alpha);
}

TEST(SwishFast, EdgeValues) {
  const float big = std::numeric_limits<float>::max(), tiny = std::numeric_limits<float>::denorm_min();
  std::vector<float> v = {0.f, -0.f, 1e-30f, -1e-30f, tiny, -tiny, 86.9f, -86.9f, 87.5f, -87.5f, 200.f, -200.f, big, -big};
  // Far negative values underflow to (signed) zero, which is within any tolerance of the exact tiny result.
  expect_swish(v, 1.0f);
  for (const runtime::KernelIsa isa : tested_kernel_isas()) {
    std::vector<float> special = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()};
    runtime::nn::swish_in_place(special.data(), 2, 1.0f, isa);
    EXPECT_TRUE(std::isnan(special[0])) << runtime::kernel_isa_name(isa);
    EXPECT_EQ(special[1], std::numeric_limits<float>::infinity()) << runtime::kernel_isa_name(isa);
  }
}

}  // namespace
}  // namespace parity::testing
