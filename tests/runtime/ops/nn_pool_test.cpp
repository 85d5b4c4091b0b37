// Pooling kernels against hand-computed values.
#include <gtest/gtest.h>

#include "runtime/ops/nn_harness.h"

namespace parity::testing::nn {
namespace {

const Tensor kGrid = ft({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});

TEST(MaxPool, PadsStridesAndIndices) {
  NodeBuilder node("MaxPool", 12);
  node.ints("kernel_shape", {2, 2}).ints("pads", {1, 1, 0, 0}).outputs(2);
  const auto out = node.run({kGrid});
  EXPECT_EQ(out[0].shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(out[1].to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  NodeBuilder col("MaxPool", 12);
  col.ints("kernel_shape", {2, 2}).i("storage_order", 1).outputs(2);
  const auto out_col = col.run({kGrid});
  EXPECT_EQ(out_col[0].to_vector<float>(), (std::vector<float>{5, 6, 8, 9}));
  // Column-major flat index of (h, w) is h + w * H.
  EXPECT_EQ(out_col[1].to_vector<int64_t>(), (std::vector<int64_t>{4, 7, 5, 8}));
}

TEST(MaxPool, CeilModeDilationsAndUint8) {
  NodeBuilder ceil("MaxPool", 12);
  ceil.ints("kernel_shape", {2, 2}).ints("strides", {2, 2}).i("ceil_mode", 1);
  EXPECT_EQ(ceil.run({kGrid})[0].to_vector<float>(), (std::vector<float>{5, 6, 8, 9}));
  NodeBuilder dil("MaxPool", 12);
  dil.ints("kernel_shape", {2, 2}).ints("dilations", {2, 2});
  EXPECT_EQ(dil.run({kGrid})[0].to_vector<float>(), (std::vector<float>{9}));
  const Tensor u8 = Tensor::from_vector<uint8_t>({1, 1, 1, 4}, {200, 3, 255, 1});
  NodeBuilder node("MaxPool", 12);
  node.ints("kernel_shape", {1, 2}).ints("strides", {1, 2});
  const Tensor y = node.run({u8})[0];
  EXPECT_EQ(y.dtype(), DType::kUInt8);
  EXPECT_EQ(y.to_vector<uint8_t>(), (std::vector<uint8_t>{200, 255}));
}

TEST(AveragePool, CountIncludePad) {
  NodeBuilder excl("AveragePool", 11);
  excl.ints("kernel_shape", {2, 2}).ints("pads", {1, 1, 0, 0});
  const auto y = excl.run({kGrid})[0].to_vector<float>();
  EXPECT_FLOAT_EQ(y[0], 1.0f);
  EXPECT_FLOAT_EQ(y[1], 1.5f);
  EXPECT_FLOAT_EQ(y[4], 3.0f);
  NodeBuilder incl("AveragePool", 11);
  incl.ints("kernel_shape", {2, 2}).ints("pads", {1, 1, 0, 0}).i("count_include_pad", 1);
  const auto yi = incl.run({kGrid})[0].to_vector<float>();
  EXPECT_FLOAT_EQ(yi[0], 0.25f);
  EXPECT_FLOAT_EQ(yi[1], 0.75f);
  EXPECT_FLOAT_EQ(yi[4], 3.0f);
}

TEST(AveragePool, SameUpperAndFp64) {
  NodeBuilder node("AveragePool", 11);
  node.ints("kernel_shape", {2, 2}).s("auto_pad", "SAME_UPPER");
  const auto y = node.run({kGrid.cast(DType::kFloat64)}, runtime::Precision::kFloat64)[0];
  EXPECT_EQ(y.dtype(), DType::kFloat64);
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{3, 4, 4.5, 6, 7, 7.5, 7.5, 8.5, 9}));
}

TEST(LpPool, PEqualsTwo) {
  NodeBuilder node("LpPool", 11);
  node.ints("kernel_shape", {1, 2}).i("p", 2);
  const Tensor x = ft({1, 1, 1, 3}, {3, 4, 0});
  EXPECT_EQ(node.run({x})[0].to_vector<float>(), (std::vector<float>{5, 4}));
}

TEST(GlobalPools, ReduceEverySpatialDim) {
  const Tensor x = ft({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -4});
  EXPECT_EQ(NodeBuilder("GlobalAveragePool", 1).run({x})[0].to_vector<float>(), (std::vector<float>{2.5f, -2.5f}));
  EXPECT_EQ(NodeBuilder("GlobalMaxPool", 1).run({x})[0].to_vector<float>(), (std::vector<float>{4, -1}));
  const Tensor y = NodeBuilder("GlobalLpPool", 2).run({x})[0];
  EXPECT_EQ(y.shape(), (Shape{1, 2, 1, 1}));
  EXPECT_FLOAT_EQ(y.to_vector<float>()[0], std::sqrt(30.0f));
}

TEST(MaxUnpool, InvertsMaxPoolIndices) {
  NodeBuilder pool("MaxPool", 12);
  pool.ints("kernel_shape", {2, 2}).ints("strides", {2, 2}).outputs(2);
  const Tensor x = ft({1, 1, 2, 4}, {1, 5, 2, 0, 3, 4, 7, 6});
  const auto p = pool.run({x});
  NodeBuilder unpool("MaxUnpool", 11);
  unpool.ints("kernel_shape", {2, 2}).ints("strides", {2, 2});
  EXPECT_EQ(unpool.run({p[0], p[1]})[0].to_vector<float>(), (std::vector<float>{0, 5, 0, 0, 0, 0, 7, 0}));
  EXPECT_THROW(unpool.run({p[0], Tensor::from_vector<int64_t>({1, 1, 1, 2}, {0, 99})}), Error);
}

TEST(Pool, RejectsKernelRankMismatch) {
  NodeBuilder node("MaxPool", 12);
  node.ints("kernel_shape", {2});
  EXPECT_THROW(node.run({kGrid}), Error);
}

}  // namespace
}  // namespace parity::testing::nn
