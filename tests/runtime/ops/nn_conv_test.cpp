// Conv / ConvTranspose / ConvInteger / QLinearConv against naive reference loops and hand values.
#include <gtest/gtest.h>

#include "runtime/ops/nn_harness.h"

namespace parity::testing::nn {
namespace {

/// Straightforward 2-D convolution (NCHW) used as an oracle.
std::vector<float> naive_conv2d(const Tensor& x, const Tensor& w, const std::vector<float>& bias, int64_t group,
                                std::array<int64_t, 2> stride, std::array<int64_t, 2> dil, std::array<int64_t, 4> pads,
                                Shape& out_shape) {
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3);
  const int64_t m = w.dim(0), kh = w.dim(2), kw = w.dim(3);
  const int64_t oh = (h + pads[0] + pads[2] - ((kh - 1) * dil[0] + 1)) / stride[0] + 1;
  const int64_t ow = (wd + pads[1] + pads[3] - ((kw - 1) * dil[1] + 1)) / stride[1] + 1;
  out_shape = {n, m, oh, ow};
  std::vector<float> y(static_cast<size_t>(n * m * oh * ow));
  const float* xp = x.data<float>();
  const float* wp = w.data<float>();
  const int64_t cg = c / group, mg = m / group;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oc = 0; oc < m; ++oc)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = bias.empty() ? 0.0 : bias[oc];
          for (int64_t ic = 0; ic < cg; ++ic)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t bb = 0; bb < kw; ++bb) {
                const int64_t ih = i * stride[0] - pads[0] + a * dil[0];
                const int64_t iw = j * stride[1] - pads[1] + bb * dil[1];
                if (ih < 0 || ih >= h || iw < 0 || iw >= wd) continue;
                const int64_t xc = (oc / mg) * cg + ic;
                acc += xp[((b * c + xc) * h + ih) * wd + iw] * wp[((oc * cg + ic) * kh + a) * kw + bb];
              }
          y[((b * m + oc) * oh + i) * ow + j] = static_cast<float>(acc);
        }
  return y;
}

struct Conv2dCase {
  int64_t n, c, h, w, m, kh, kw, group;
  std::array<int64_t, 2> stride, dil;
  std::array<int64_t, 4> pads;
  bool bias;
};

class Conv2dAgainstNaive : public ::testing::TestWithParam<Conv2dCase> {};

TEST_P(Conv2dAgainstNaive, Matches) {
  const Conv2dCase& p = GetParam();
  const Tensor x = random_tensor({p.n, p.c, p.h, p.w}, 1);
  const Tensor w = random_tensor({p.m, p.c / p.group, p.kh, p.kw}, 2);
  const Tensor b = random_tensor({p.m}, 3);
  Shape shape;
  const auto expected =
      naive_conv2d(x, w, p.bias ? b.to_vector<float>() : std::vector<float>{}, p.group, p.stride, p.dil, p.pads, shape);
  NodeBuilder node("Conv", 11);
  node.i("group", p.group)
      .ints("strides", {p.stride[0], p.stride[1]})
      .ints("dilations", {p.dil[0], p.dil[1]})
      .ints("pads", {p.pads[0], p.pads[1], p.pads[2], p.pads[3]});
  const auto out = node.run(p.bias ? std::vector<Tensor>{x, w, b} : std::vector<Tensor>{x, w});
  ASSERT_EQ(out[0].shape(), shape);
  EXPECT_LT(max_abs_diff(out[0], ft(shape, expected)), 1e-4);
  // fp64 oracle mode computes in double and keeps the dtype.
  const auto out64 = node.run(p.bias ? std::vector<Tensor>{x.cast(DType::kFloat64), w.cast(DType::kFloat64),
                                                           b.cast(DType::kFloat64)}
                                     : std::vector<Tensor>{x.cast(DType::kFloat64), w.cast(DType::kFloat64)},
                              runtime::Precision::kFloat64);
  EXPECT_EQ(out64[0].dtype(), DType::kFloat64);
  EXPECT_LT(max_abs_diff(out64[0], ft(shape, expected)), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Conv2dAgainstNaive,
    ::testing::Values(Conv2dCase{1, 3, 7, 6, 4, 3, 3, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true},
                      Conv2dCase{2, 4, 9, 8, 6, 3, 2, 2, {2, 1}, {1, 2}, {1, 0, 2, 1}, true},
                      Conv2dCase{1, 8, 10, 10, 8, 3, 3, 8, {1, 1}, {1, 1}, {1, 1, 1, 1}, false},  // depthwise
                      Conv2dCase{1, 4, 10, 10, 8, 3, 3, 4, {2, 2}, {1, 1}, {1, 1, 1, 1}, true},  // multiplier 2
                      Conv2dCase{1, 2, 5, 5, 3, 5, 5, 1, {3, 3}, {1, 1}, {4, 4, 4, 4}, true},  // pads > input
                      Conv2dCase{1, 2, 12, 12, 2, 3, 3, 1, {1, 3}, {3, 2}, {2, 0, 0, 3}, false},
                      Conv2dCase{1, 3, 4, 4, 2, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, true}));  // pointwise

TEST(Conv, OneAndThreeDimensionalAgreeWithTwoDimensional) {
  // A 1-D conv equals a 2-D conv with a unit height; a 3-D conv with unit depth likewise.
  const Tensor x = random_tensor({1, 2, 1, 9}, 4);
  const Tensor w = random_tensor({3, 2, 1, 3}, 5);
  NodeBuilder node2("Conv", 11);
  node2.ints("pads", {0, 1, 0, 1}).ints("strides", {1, 2});
  const Tensor y2 = node2.run({x, w})[0];
  NodeBuilder node1("Conv", 11);
  node1.ints("pads", {1, 1}).ints("strides", {2});
  const Tensor y1 = node1.run({x.reshaped({1, 2, 9}), w.reshaped({3, 2, 3})})[0];
  EXPECT_EQ(y1.shape(), (Shape{1, 3, 5}));
  EXPECT_LT(max_abs_diff(y1, y2.reshaped({1, 3, 5})), 1e-6);
  NodeBuilder node3("Conv", 11);
  node3.ints("pads", {0, 0, 1, 0, 0, 1}).ints("strides", {1, 1, 2});
  const Tensor y3 = node3.run({x.reshaped({1, 2, 1, 1, 9}), w.reshaped({3, 2, 1, 1, 3})})[0];
  EXPECT_LT(max_abs_diff(y3.reshaped({1, 3, 5}), y1), 1e-6);
}

TEST(Conv, AutoPadSameUpperAndLower) {
  // 1x1x4x4 ones, 2x2 ones kernel: SAME_UPPER pads at the end, SAME_LOWER at the beginning.
  const Tensor x = ft({1, 1, 1, 4}, {1, 2, 3, 4});
  const Tensor w = ft({1, 1, 1, 2}, {1, 10});
  NodeBuilder upper("Conv", 11);
  upper.s("auto_pad", "SAME_UPPER");
  EXPECT_EQ(upper.run({x, w})[0].to_vector<float>(), (std::vector<float>{21, 32, 43, 4}));
  NodeBuilder lower("Conv", 11);
  lower.s("auto_pad", "SAME_LOWER");
  EXPECT_EQ(lower.run({x, w})[0].to_vector<float>(), (std::vector<float>{10, 21, 32, 43}));
  NodeBuilder valid("Conv", 11);
  valid.s("auto_pad", "VALID");
  EXPECT_EQ(valid.run({x, w})[0].to_vector<float>(), (std::vector<float>{21, 32, 43}));
}

TEST(Conv, Float16ComputesThroughFloat) {
  const Tensor x = random_tensor({1, 2, 5, 5}, 6);
  const Tensor w = random_tensor({2, 2, 3, 3}, 7);
  NodeBuilder node("Conv", 11);
  const Tensor ref = node.run({x, w})[0];
  const Tensor half = node.run({x.cast(DType::kFloat16), w.cast(DType::kFloat16)})[0];
  EXPECT_EQ(half.dtype(), DType::kFloat16);
  EXPECT_LT(max_abs_diff(half, ref), 2e-2);
}

TEST(Conv, BadShapesFailWithNodeName) {
  NodeBuilder node("Conv", 11);
  try {
    node.run({random_tensor({1, 3, 5, 5}, 1), random_tensor({2, 2, 3, 3}, 2)});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kRuntime);
    EXPECT_NE(std::string(e.what()).find("test_node"), std::string::npos);
  }
  EXPECT_THROW(node.run({random_tensor({1, 3, 2, 2}, 1), random_tensor({2, 3, 3, 3}, 2)}), Error);  // kernel > input
  EXPECT_THROW(node.run({random_tensor({3, 5}, 1), random_tensor({2, 3}, 2)}), Error);  // rank 2
  NodeBuilder bad_group("Conv", 11);
  bad_group.i("group", 2);
  EXPECT_THROW(bad_group.run({random_tensor({1, 3, 5, 5}, 1), random_tensor({2, 3, 3, 3}, 2)}), Error);
}

TEST(ConvTranspose, EqualsScatterOfConvWeights) {
  // 1-D: y[i*s + k - p] += x[i] * w[k]; hand-computed.
  const Tensor x = ft({1, 1, 3}, {1, 2, 3});
  const Tensor w = ft({1, 1, 2}, {1, 10});
  NodeBuilder node("ConvTranspose", 11);
  node.ints("strides", {2});
  EXPECT_EQ(node.run({x, w})[0].to_vector<float>(), (std::vector<float>{1, 10, 2, 20, 3, 30}));
  NodeBuilder padded("ConvTranspose", 11);
  padded.ints("strides", {2}).ints("pads", {1, 0}).ints("output_padding", {1});
  EXPECT_EQ(padded.run({x, w})[0].to_vector<float>(), (std::vector<float>{10, 2, 20, 3, 30, 0}));
  NodeBuilder shaped("ConvTranspose", 11);
  shaped.ints("strides", {2}).ints("output_shape", {7});
  EXPECT_EQ(shaped.run({x, w})[0].to_vector<float>(), (std::vector<float>{1, 10, 2, 20, 3, 30, 0}));
}

TEST(ConvTranspose, GroupsAndBias) {
  // Two groups, each a 1x1 kernel: channel-wise scaling plus bias.
  const Tensor x = ft({1, 2, 2}, {1, 2, 3, 4});
  const Tensor w = ft({2, 1, 1}, {2, 3});
  const Tensor b = ft({2}, {10, 20});
  NodeBuilder node("ConvTranspose", 11);
  node.i("group", 2);
  EXPECT_EQ(node.run({x, w, b})[0].to_vector<float>(), (std::vector<float>{12, 14, 29, 32}));
}

TEST(ConvInteger, SubtractsZeroPoints) {
  const Tensor x = Tensor::from_vector<uint8_t>({1, 1, 2, 2}, {3, 4, 5, 6});
  const Tensor w = Tensor::from_vector<uint8_t>({1, 1, 1, 1}, {3});
  const Tensor xz = Tensor::scalar<uint8_t>(1);
  const Tensor wz = Tensor::scalar<uint8_t>(1);
  NodeBuilder node("ConvInteger", 10);
  const Tensor y = node.run({x, w, xz, wz})[0];
  EXPECT_EQ(y.dtype(), DType::kInt32);
  EXPECT_EQ(y.to_vector<int32_t>(), (std::vector<int32_t>{4, 6, 8, 10}));
}

TEST(QLinearConv, RequantizesWithRoundingAndSaturation) {
  const Tensor x = Tensor::from_vector<uint8_t>({1, 1, 1, 3}, {10, 20, 250});
  const Tensor w = Tensor::from_vector<uint8_t>({1, 1, 1, 1}, {2});
  NodeBuilder node("QLinearConv", 10);
  const Tensor y = node.run({x, ft({}, {0.5f}), Tensor::scalar<uint8_t>(0), w, ft({}, {1.0f}),
                             Tensor::scalar<uint8_t>(0), ft({}, {1.0f}), Tensor::scalar<uint8_t>(5)})[0];
  // acc = x*2; y = round(acc*0.5) + 5, saturated at 255.
  EXPECT_EQ(y.to_vector<uint8_t>(), (std::vector<uint8_t>{15, 25, 255}));
}

}  // namespace
}  // namespace parity::testing::nn
