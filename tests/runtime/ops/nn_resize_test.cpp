// Resize, Upsample, DepthToSpace, SpaceToDepth and Dropout against hand-computed values.
#include <gtest/gtest.h>

#include "runtime/ops/nn_harness.h"

namespace parity::testing::nn {
namespace {

const Tensor kRow = ft({1, 1, 1, 4}, {1, 2, 3, 4});
Tensor scales4(float h, float w) { return ft({4}, {1, 1, h, w}); }
Tensor sizes4(int64_t h, int64_t w) { return Tensor::from_vector<int64_t>({4}, {1, 1, h, w}); }

TEST(Resize, NearestModesAndCoordinateModes) {
  NodeBuilder half("Resize", 13);  // half_pixel + round_prefer_floor
  EXPECT_EQ(half.run({kRow, Tensor(), scales4(1, 0.5f)})[0].to_vector<float>(), (std::vector<float>{1, 3}));
  NodeBuilder asym("Resize", 13);
  asym.s("coordinate_transformation_mode", "asymmetric").s("nearest_mode", "floor");
  EXPECT_EQ(asym.run({kRow, Tensor(), scales4(1, 2)})[0].to_vector<float>(),
            (std::vector<float>{1, 1, 2, 2, 3, 3, 4, 4}));
  NodeBuilder ceil("Resize", 13);
  ceil.s("coordinate_transformation_mode", "asymmetric").s("nearest_mode", "ceil");
  EXPECT_EQ(ceil.run({kRow, Tensor(), scales4(1, 2)})[0].to_vector<float>(),
            (std::vector<float>{1, 2, 2, 3, 3, 4, 4, 4}));
}

TEST(Resize, LinearHalfPixelAndAlignCorners) {
  NodeBuilder lin("Resize", 13);
  lin.s("mode", "linear");
  // half_pixel 2x: x_orig = (x + 0.5) / 2 - 0.5, clamped at the edges.
  EXPECT_EQ(lin.run({kRow, Tensor(), Tensor(), sizes4(1, 8)})[0].to_vector<float>(),
            (std::vector<float>{1, 1.25f, 1.75f, 2.25f, 2.75f, 3.25f, 3.75f, 4}));
  NodeBuilder ac("Resize", 13);
  ac.s("mode", "linear").s("coordinate_transformation_mode", "align_corners");
  EXPECT_EQ(ac.run({kRow, Tensor(), Tensor(), sizes4(1, 7)})[0].to_vector<float>(),
            (std::vector<float>{1, 1.5f, 2, 2.5f, 3, 3.5f, 4}));
}

TEST(Resize, CubicOnLinearDataIsExactInTheInterior) {
  // Cubic convolution reproduces linear functions away from the borders.
  const Tensor x = ft({1, 1, 1, 8}, {0, 1, 2, 3, 4, 5, 6, 7});
  NodeBuilder cubic("Resize", 13);
  cubic.s("mode", "cubic").s("coordinate_transformation_mode", "align_corners");
  const auto y = cubic.run({x, Tensor(), Tensor(), sizes4(1, 15)})[0].to_vector<float>();
  for (int i = 2; i < 13; ++i) EXPECT_NEAR(y[i], i * 0.5f, 1e-5) << i;
}

TEST(Resize, TfCropAndResizeExtrapolates) {
  NodeBuilder crop("Resize", 13);
  crop.s("mode", "linear").s("coordinate_transformation_mode", "tf_crop_and_resize").f("extrapolation_value", -1);
  const Tensor roi = ft({8}, {0, 0, 0, 0.5f, 1, 1, 1, 1.5f});
  // x_orig = 1.5 + x * 3 * 1.0 / 3 ... for 4 outputs over [0.5, 1.5] * 3.
  EXPECT_EQ(crop.run({kRow, roi, Tensor(), sizes4(1, 4)})[0].to_vector<float>(),
            (std::vector<float>{2.5f, 3.5f, -1, -1}));
}

TEST(Resize, RejectsBothScalesAndSizes) {
  NodeBuilder node("Resize", 13);
  EXPECT_THROW(node.run({kRow, Tensor(), scales4(1, 2), sizes4(1, 8)}), Error);
  EXPECT_THROW(node.run({kRow, Tensor(), ft({2}, {1, 2})}), Error);
}

TEST(Upsample, NearestOpsets1And7And9) {
  NodeBuilder u7("Upsample", 7);
  u7.floats("scales", {1, 1, 2, 1});
  const Tensor x = ft({1, 1, 2, 1}, {1, 2});
  EXPECT_EQ(u7.run({x})[0].to_vector<float>(), (std::vector<float>{1, 1, 2, 2}));
  NodeBuilder u1("Upsample", 1);
  u1.f("height_scale", 2).f("width_scale", 1);
  EXPECT_EQ(u1.run({x})[0].to_vector<float>(), (std::vector<float>{1, 1, 2, 2}));
  NodeBuilder u9("Upsample", 9);
  EXPECT_EQ(u9.run({x, ft({4}, {1, 1, 2, 1})})[0].to_vector<float>(), (std::vector<float>{1, 1, 2, 2}));
}

TEST(DepthToSpace, DcrCrdAndInverse) {
  // 4 channels of 1x1 -> one 2x2 channel.
  const Tensor x = ft({1, 4, 1, 1}, {1, 2, 3, 4});
  NodeBuilder dcr("DepthToSpace", 13);
  dcr.i("blocksize", 2);
  const Tensor y = dcr.run({x})[0];
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  // 8 channels: DCR interleaves depth-major, CRD channel-major.
  std::vector<float> v(8);
  for (int i = 0; i < 8; ++i) v[i] = static_cast<float>(i);
  const Tensor x8 = ft({1, 8, 1, 1}, v);
  EXPECT_EQ(dcr.run({x8})[0].to_vector<float>(), (std::vector<float>{0, 2, 4, 6, 1, 3, 5, 7}));
  NodeBuilder crd("DepthToSpace", 13);
  crd.i("blocksize", 2).s("mode", "CRD");
  EXPECT_EQ(crd.run({x8})[0].to_vector<float>(), v);
  NodeBuilder s2d("SpaceToDepth", 13);
  s2d.i("blocksize", 2);
  const Tensor img = random_tensor({1, 2, 4, 6}, 3);
  EXPECT_TRUE(dcr.run({s2d.run({img})[0]})[0].bit_equal(img));
  EXPECT_THROW(s2d.run({random_tensor({1, 1, 3, 4}, 1)}), Error);
}

TEST(Dropout, InferenceIsIdentityWithFullMask) {
  const Tensor x = ft({3}, {1, 2, 3});
  NodeBuilder node("Dropout", 13);
  node.outputs(2);
  const auto out = node.run({x, ft({}, {0.5f})});
  EXPECT_TRUE(out[0].bit_equal(x));
  EXPECT_EQ(out[1].dtype(), DType::kBool);
  EXPECT_EQ(out[1].to_vector<bool>(), (std::vector<bool>{true, true, true}));
}

TEST(Dropout, TrainingScalesKeptValues) {
  const Tensor x = ft({1000}, std::vector<float>(1000, 1.0f));
  NodeBuilder node("Dropout", 13);
  node.i("seed", 7).outputs(2);
  const auto out = node.run({x, ft({}, {0.25f}), Tensor::scalar<bool>(true)});
  const auto y = out[0].to_vector<float>();
  const auto m = out[1].to_vector<bool>();
  int kept = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    EXPECT_FLOAT_EQ(y[i], m[i] ? 1.0f / 0.75f : 0.0f);
    kept += m[i];
  }
  EXPECT_GT(kept, 700);
  EXPECT_LT(kept, 800);
}

}  // namespace
}  // namespace parity::testing::nn
