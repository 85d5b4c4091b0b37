// DFT, STFT, window functions and MelWeightMatrix against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "runtime/ops/nn_harness.h"

namespace parity::testing::nn {
namespace {

TEST(Dft, RealImpulseAndInverseRoundTrip) {
  // DFT of [1, 0, 0, 0] is all ones; of [0, 1, 0, 0] is exp(-i*pi*k/2).
  const Tensor x = ft({1, 4, 1}, {0, 1, 0, 0});
  const auto y = NodeBuilder("DFT", 17).run({x})[0];
  EXPECT_EQ(y.shape(), (Shape{1, 4, 2}));
  const std::vector<float> expected{1, 0, 0, -1, -1, 0, 0, 1};
  EXPECT_LT(max_abs_diff(y, ft({1, 4, 2}, expected)), 1e-6);
  const auto back = NodeBuilder("DFT", 17).i("inverse", 1).run({y})[0];
  EXPECT_LT(max_abs_diff(back, ft({1, 4, 2}, {0, 0, 1, 0, 0, 0, 0, 0})), 1e-6);
}

TEST(Dft, OnesidedAndDftLength) {
  const Tensor x = ft({1, 3, 1}, {1, 2, 3});
  NodeBuilder node("DFT", 17);
  node.i("onesided", 1);
  // dft_length 4 zero-pads: X[k] = 1 + 2w^k + 3w^2k with w = exp(-i*pi/2); bins 0..2.
  const auto y = node.run({x, Tensor::scalar<int64_t>(4)})[0];
  EXPECT_EQ(y.shape(), (Shape{1, 3, 2}));
  EXPECT_LT(max_abs_diff(y, ft({1, 3, 2}, {6, 0, -2, -2, 2, 0})), 1e-6);
  // inverse + onesided is the inverse real DFT: those bins give back the zero-padded signal.
  const auto back = NodeBuilder("DFT", 17).i("inverse", 1).i("onesided", 1).run({y, Tensor::scalar<int64_t>(4)})[0];
  EXPECT_EQ(back.shape(), (Shape{1, 4, 1}));
  EXPECT_LT(max_abs_diff(back, ft({1, 4, 1}, {1, 2, 3, 0})), 1e-6);
}

TEST(Stft, FramesWithWindow) {
  // Signal 0..5, frame 4, step 2 -> 2 frames; window [0, 1, 1, 0] keeps the middle samples.
  const Tensor x = ft({1, 6, 1}, {0, 1, 2, 3, 4, 5});
  const auto y = NodeBuilder("STFT", 17).run({x, Tensor::scalar<int64_t>(2), ft({4}, {0, 1, 1, 0})})[0];
  EXPECT_EQ(y.shape(), (Shape{1, 2, 3, 2}));
  // Frame 0 windowed: [0, 1, 2, 0] -> X0 = 3, X1 = 1*(-i) + 2*(-1) = -2 - i, X2 = -1 + 2 = 1.
  const auto v = y.to_vector<float>();
  EXPECT_NEAR(v[0], 3, 1e-6);
  EXPECT_NEAR(v[2], -2, 1e-6);
  EXPECT_NEAR(v[3], -1, 1e-6);
  EXPECT_NEAR(v[4], 1, 1e-6);
  EXPECT_THROW(NodeBuilder("STFT", 17).run({x, Tensor::scalar<int64_t>(2), ft({4}, {1, 1, 1, 1}),
                                            Tensor::scalar<int64_t>(3)}),
               Error);
}

TEST(Windows, PeriodicAndSymmetric) {
  const auto hann = NodeBuilder("HannWindow", 17).run({Tensor::scalar<int64_t>(4)})[0];
  EXPECT_LT(max_abs_diff(hann, ft({4}, {0, 0.5f, 1, 0.5f})), 1e-6);
  const auto sym = NodeBuilder("HannWindow", 17).i("periodic", 0).run({Tensor::scalar<int64_t>(3)})[0];
  EXPECT_LT(max_abs_diff(sym, ft({3}, {0, 1, 0})), 1e-6);
  const auto hamming = NodeBuilder("HammingWindow", 17).run({Tensor::scalar<int64_t>(2)})[0];
  EXPECT_LT(max_abs_diff(hamming, ft({2}, {4.0f / 46, 1})), 1e-6);
  const auto blackman = NodeBuilder("BlackmanWindow", 17).i("output_datatype", 11).run({Tensor::scalar<int64_t>(2)})[0];
  EXPECT_EQ(blackman.dtype(), DType::kFloat64);
  EXPECT_LT(max_abs_diff(blackman, ft({2}, {0, 1})), 1e-9);
}

TEST(MelWeightMatrix, ShapeAndTriangles) {
  const auto y = NodeBuilder("MelWeightMatrix", 17)
                     .run({Tensor::scalar<int64_t>(4), Tensor::scalar<int64_t>(64), Tensor::scalar<int64_t>(16000),
                           ft({}, {0}), ft({}, {8000})})[0];
  EXPECT_EQ(y.shape(), (Shape{33, 4}));
  // Every band has a peak of 1 and values within [0, 1].
  const auto v = y.to_vector<float>();
  for (int band = 0; band < 4; ++band) {
    float peak = 0;
    for (int k = 0; k < 33; ++k) {
      EXPECT_GE(v[k * 4 + band], 0.0f);
      EXPECT_LE(v[k * 4 + band], 1.0f);
      peak = std::max(peak, v[k * 4 + band]);
    }
    EXPECT_FLOAT_EQ(peak, 1.0f);
  }
}

}  // namespace
}  // namespace parity::testing::nn
