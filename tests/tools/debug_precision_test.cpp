// debug precision (tools/debug_precision.h) on a model built so that exactly one named layer
// overflows float16: every search mode and direction names that layer and no other.
#include "tools/debug_precision.h"

#include <gtest/gtest.h>

#include <random>

#include "support/model_builder.h"

namespace parity {
namespace {

using testing::random_tensor;

/// x -> Relu "relu" -> Mul(100000) "amplify" -> y1 (beyond float16's 65504)
///                  \-> MatMul "mm" -> Sigmoid "squash" -> Add "shift" -> y2
onnx::ModelProto overflow_model() {
  testing::ModelBuilder b;
  b.input("x", DType::kFloat32, {2, 8}).output("y1", DType::kFloat32, {2, 8}).output("y2", DType::kFloat32, {2, 4});
  b.initializer("W", random_tensor({8, 4}, 3));
  b.initializer("big", Tensor::from_vector<float>({1}, {100000.0f}));
  b.initializer("one", Tensor::from_vector<float>({1}, {1.0f}));
  b.node("Relu", {"x"}, {"r"}, "relu");
  b.node("Mul", {"r", "big"}, {"y1"}, "amplify");
  b.node("MatMul", {"r", "W"}, {"m"}, "mm");
  b.node("Sigmoid", {"m"}, {"s"}, "squash");
  b.node("Add", {"s", "one"}, {"y2"}, "shift");
  return b.model();
}

TEST(DebugPrecision, ReducibleLayersInExecutionOrder) {
  EXPECT_EQ(tools::reducible_layers(overflow_model(), ""),
            (std::vector<std::string>{"relu", "amplify", "mm", "squash", "shift"}));
}

TEST(DebugPrecision, FindsTheOneOverflowingLayerInEveryModeAndDirection) {
  const onnx::ModelProto model = overflow_model();
  std::vector<TensorMap> feeds{TensorMap{{"x", random_tensor({2, 8}, 5)}}};
  for (auto mode : {tools::PrecisionSearch::Mode::kBisect, tools::PrecisionSearch::Mode::kLinear})
    for (auto direction : {tools::PrecisionSearch::Direction::kForward, tools::PrecisionSearch::Direction::kReverse}) {
      tools::PrecisionSearch search;
      search.mode = mode;
      search.direction = direction;
      search.atol = 1e-2;
      search.rtol = 1e-2;
      const auto result = tools::search_fp32_layers(model, "", feeds, search);
      EXPECT_FALSE(result.passes_reduced);
      EXPECT_TRUE(result.passes_fp32);
      EXPECT_EQ(result.fp32_layers, std::vector<std::string>{"amplify"})
          << "mode " << static_cast<int>(mode) << " direction " << static_cast<int>(direction);
    }
}

TEST(DebugPrecision, APlanThatPassesNeedsNoFp32Layer) {
  const onnx::ModelProto model = overflow_model();
  std::vector<TensorMap> feeds{TensorMap{{"x", random_tensor({2, 8}, 5)}}};
  tools::PrecisionSearch search;
  search.reduced = DType::kBFloat16;
  search.atol = 1e30;  // everything but inf passes ... and bf16 does not overflow at 1e5
  search.rtol = 0;
  const auto result = tools::search_fp32_layers(model, "", feeds, search);
  EXPECT_TRUE(result.passes_reduced);
  EXPECT_TRUE(result.fp32_layers.empty());
  EXPECT_EQ(result.builds, 1);
}

}  // namespace
}  // namespace parity
