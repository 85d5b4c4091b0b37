// Normalization kernels against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/ops/nn_harness.h"

namespace parity::testing::nn {
namespace {

TEST(BatchNormalization, InferenceUsesRunningStats) {
  const Tensor x = ft({1, 2, 1, 2}, {1, 2, 3, 4});
  const auto y = NodeBuilder("BatchNormalization", 15)
                     .f("epsilon", 0.0f)
                     .run({x, ft({2}, {1, 2}), ft({2}, {0, 1}), ft({2}, {1, 3}), ft({2}, {4, 1})})[0];
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{0, 0.5f, 1, 3}));
}

TEST(BatchNormalization, TrainingModeUpdatesRunningStats) {
  const Tensor x = ft({2, 1, 1, 1}, {1, 3});
  NodeBuilder node("BatchNormalization", 15);
  node.i("training_mode", 1).f("epsilon", 0.0f).f("momentum", 0.5f).outputs(3);
  const auto out = node.run({x, ft({1}, {1}), ft({1}, {0}), ft({1}, {0}), ft({1}, {1})});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{-1, 1}));  // batch mean 2, var 1
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{1}));      // 0*0.5 + 2*0.5
  EXPECT_EQ(out[2].to_vector<float>(), (std::vector<float>{1}));      // 1*0.5 + 1*0.5
}

TEST(InstanceNormalization, PerInstanceStats) {
  const Tensor x = ft({1, 2, 2}, {1, 3, 10, 12});
  const auto y =
      NodeBuilder("InstanceNormalization", 6).f("epsilon", 0.0f).run({x, ft({2}, {2, 1}), ft({2}, {0, 5})})[0];
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{-2, 2, 4, 6}));
}

TEST(LayerNormalization, AxisAndStatOutputs) {
  const Tensor x = ft({2, 2}, {1, 3, 2, 4});
  NodeBuilder node("LayerNormalization", 17);
  node.f("epsilon", 0.0f).outputs(3);
  node.omit_output(2);
  const auto out = node.run({x, ft({2}, {1, 2}), ft({2}, {0, 1})});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{-1, 3, -1, 3}));
  EXPECT_EQ(out[1].shape(), (Shape{2, 1}));
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{2, 3}));
  EXPECT_FALSE(out[2].defined());
  NodeBuilder bad("LayerNormalization", 17);
  bad.i("axis", 2);
  EXPECT_THROW(bad.run({x, ft({2}, {1, 2})}), Error);
}

TEST(LpNormalization, L1AndL2) {
  const Tensor x = ft({2, 2}, {3, 4, 0, 0});
  EXPECT_EQ(NodeBuilder("LpNormalization", 1).run({x})[0].to_vector<float>(),
            (std::vector<float>{0.6f, 0.8f, 0, 0}));
  EXPECT_EQ(NodeBuilder("LpNormalization", 1).i("p", 1).i("axis", 0).run({x})[0].to_vector<float>(),
            (std::vector<float>{1, 1, 0, 0}));
}

TEST(Lrn, NeighbourhoodAcrossChannels) {
  const Tensor x = ft({1, 3, 1, 1}, {1, 2, 3});
  const auto y = NodeBuilder("LRN", 13).i("size", 3).f("alpha", 3.0f).f("beta", 1.0f).f("bias", 1.0f).run({x})[0];
  // square sums: c0: 1+4=5, c1: 14, c2: 13; y = x / (1 + sum)
  const auto v = y.to_vector<float>();
  EXPECT_FLOAT_EQ(v[0], 1.0f / 6);
  EXPECT_FLOAT_EQ(v[1], 2.0f / 15);
  EXPECT_FLOAT_EQ(v[2], 3.0f / 14);
}

TEST(MeanVarianceNormalization, DefaultAxes) {
  const Tensor x = ft({1, 2, 1, 2}, {1, 3, 5, 5});
  const auto v = NodeBuilder("MeanVarianceNormalization", 13).run({x})[0].to_vector<float>();
  EXPECT_NEAR(v[0], -1.0f, 1e-6);
  EXPECT_NEAR(v[1], 1.0f, 1e-6);
  EXPECT_NEAR(v[2], 0.0f, 1e-6);
}

}  // namespace
}  // namespace parity::testing::nn
