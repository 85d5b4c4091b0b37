// The planner recognizes HardSwish, GELU and SiLU exported as elementwise chains, runs each as one
// node (fused into the producing Conv/MatMul when possible), and keeps the chain's numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "support/model_builder.h"
#include "runtime/ops/op_tester.h"
#include "runtime/session.h"
#include "runtime/session_test_util.h"

namespace parity::runtime {
namespace {

using testing::ModelBuilder;

Tensor random_tensor(const Shape& shape, uint32_t seed, float lo = -6, float hi = 6) {
  return testing::random_uniform(shape, seed, lo, hi);
}

Tensor scalar(float v) { return Tensor::from_vector<float>({}, {v}); }

/// y = Conv(x) then the HardSwish chain y*clip(y+3,0,6)/6, with `three` in place of 3.
onnx::ModelProto conv_hard_swish_model(float three = 3, bool expose_intermediate = false, int group = 1,
                                       bool affine = false, int64_t channels = 4, int64_t size = 9) {
  ModelBuilder b(13);
  const int64_t out_channels = 2 * channels;
  b.input("x", DType::kFloat32, {1, channels, size, size}).output("out", DType::kFloat32, {1, out_channels, size, size});
  if (expose_intermediate) b.output("shifted", DType::kFloat32, {1, out_channels, size, size});
  b.initializer("w", random_tensor({out_channels, channels / group, 3, 3}, 1, -0.5f, 0.5f))
      .initializer("bias", random_tensor({out_channels}, 2));
  b.initializer("scale", scalar(0.47f)).initializer("shift", scalar(-0.3f));
  b.initializer("three", scalar(three)).initializer("zero", scalar(0)).initializer("six", scalar(6));
  auto& conv = b.node("Conv", {"x", "w", "bias"}, {affine ? "c" : "y"}, "conv");
  testing::add_int_attr(conv, "group", group);
  if (affine) {
    b.node("Mul", {"scale", "c"}, {"m"}, "scale");
    b.node("Add", {"m", "shift"}, {"y"}, "shift");
  }
  auto* pads = conv.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int k = 0; k < 4; ++k) pads->add_ints(1);
  b.node("Add", {"y", "three"}, {"shifted"}, "add3");
  b.node("Clip", {"shifted", "zero", "six"}, {"clipped"}, "clip");
  b.node("Mul", {"y", "clipped"}, {"scaled"}, "mul");
  b.node("Div", {"scaled", "six"}, {"out"}, "div6");
  return b.model();
}

/// h = MatMul(x, w) + bias, then torch's exact GELU chain.
onnx::ModelProto matmul_gelu_model() {
  ModelBuilder b(17);
  b.input("x", DType::kFloat32, {3, 16}).output("out", DType::kFloat32, {3, 32});
  b.initializer("w", random_tensor({16, 32}, 3, -0.5f, 0.5f)).initializer("bias", random_tensor({32}, 4, -1, 1));
  b.initializer("sqrt2", scalar(1.41421356f)).initializer("one", scalar(1)).initializer("half", scalar(0.5f));
  b.node("MatMul", {"x", "w"}, {"mm"}, "matmul");
  b.node("Add", {"mm", "bias"}, {"h"}, "bias_add");
  b.node("Div", {"h", "sqrt2"}, {"scaled"}, "div");
  b.node("Erf", {"scaled"}, {"erf"}, "erf");
  b.node("Add", {"erf", "one"}, {"erf1"}, "add1");
  b.node("Mul", {"h", "erf1"}, {"gated"}, "mul");
  b.node("Mul", {"gated", "half"}, {"out"}, "half");
  return b.model();
}

/// y = Conv(x) (group `group`), then SiLU as torch exports it: Mul(y, Sigmoid(y)), the Mul's
/// operands in either order; `expose_sigmoid` also makes the Sigmoid's output a graph output.
onnx::ModelProto conv_silu_model(int64_t channels, int64_t size, int group, bool sigmoid_first,
                                 bool expose_sigmoid = false) {
  ModelBuilder b(17);
  b.input("x", DType::kFloat32, {1, channels, size, size}).output("out", DType::kFloat32, {1, channels, size, size});
  if (expose_sigmoid) b.output("s", DType::kFloat32, {1, channels, size, size});
  b.initializer("w", random_tensor({channels, channels / group, 3, 3}, 11, -0.5f, 0.5f))
      .initializer("bias", random_tensor({channels}, 12, -1, 1));
  auto& conv = b.node("Conv", {"x", "w", "bias"}, {"y"}, "conv");
  testing::add_int_attr(conv, "group", group);
  auto* pads = conv.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int k = 0; k < 4; ++k) pads->add_ints(1);
  b.node("Sigmoid", {"y"}, {"s"}, "sigmoid");
  if (sigmoid_first) b.node("Mul", {"s", "y"}, {"out"}, "mul");
  else b.node("Mul", {"y", "s"}, {"out"}, "mul");
  return b.model();
}

/// SiLU on a graph input (no producer to fuse into): the standalone ai.parity::Swish kernel.
onnx::ModelProto silu_model(const Shape& shape) {
  ModelBuilder b(17);
  b.input("x", DType::kFloat32, shape).output("out", DType::kFloat32, shape);
  b.node("Sigmoid", {"x"}, {"s"}, "sigmoid");
  b.node("Mul", {"x", "s"}, {"out"}, "mul");
  return b.model();
}

Session make_session(const onnx::ModelProto& model, KernelTier tier) {
  return testing::session_with_kernels(model, tier);
}

std::vector<std::string> profile_run(const Session& s, const TensorMap& feed) {
  return testing::executed_node_labels(s, feed);
}

using testing::any_label_contains;

TEST(ActivationRewrite, ConvHardSwishChainBecomesOneNodeWithTheSameNumbers) {
  const auto model = conv_hard_swish_model();
  TensorMap feed;
  feed.set("x", random_tensor({1, 4, 9, 9}, 5));
  const Session optimized = make_session(model, KernelTier::kOptimized);
  const Tensor expected = make_session(model, KernelTier::kReference).run(feed).at("out");
  EXPECT_TRUE(testing::tensors_close(optimized.run(feed).at("out"), expected, 1e-5, 1e-5));

  const auto profile = profile_run(optimized, feed);
  EXPECT_TRUE(any_label_contains(profile, "ai.parity::HardSwish")) << "the chain was not recognized";
  EXPECT_FALSE(any_label_contains(profile, "Clip node")) << "the chain's nodes should be gone";
}

TEST(ActivationRewrite, GroupedAndAffineConvHardSwish) {
  for (int64_t channels : {4, 32})
  for (int group : {1, 4, int(channels)})
    for (bool affine : {false, true}) {
      const int64_t size = channels == 4 ? 9 : 40;
      const auto model = conv_hard_swish_model(3, false, group, affine, channels, size);
      TensorMap feed;
      feed.set("x", random_tensor({1, channels, size, size}, 15));
      const Tensor expected = make_session(model, KernelTier::kReference).run(feed).at("out");
      const Tensor actual = make_session(model, KernelTier::kOptimized).run(feed).at("out");
      EXPECT_TRUE(testing::tensors_close(actual, expected, 1e-4, 1e-4))
          << "group " << group << " affine " << affine << " channels " << channels;
    }
}

TEST(ActivationRewrite, MatMulGeluChainBecomesOneNodeWithTheSameNumbers) {
  const auto model = matmul_gelu_model();
  TensorMap feed;
  feed.set("x", random_tensor({3, 16}, 6, -2, 2));
  const Session optimized = make_session(model, KernelTier::kOptimized);
  const Tensor expected = make_session(model, KernelTier::kReference).run(feed).at("out");
  EXPECT_TRUE(testing::tensors_close(optimized.run(feed).at("out"), expected, 1e-5, 1e-5));
  const auto profile = profile_run(optimized, feed);
  EXPECT_TRUE(any_label_contains(profile, "ai.parity::Gelu"));
  EXPECT_FALSE(any_label_contains(profile, "Erf node"));
}

TEST(ActivationRewrite, ConvSiluBecomesOneFusedNodeWithTheSameNumbers) {
  for (int64_t channels : {1, 8, 32})
    for (int group : {1, int(channels)})
      for (bool sigmoid_first : {false, true}) {
        const int64_t size = channels == 32 ? 17 : 5;
        const auto model = conv_silu_model(channels, size, group, sigmoid_first);
        TensorMap feed;
        feed.set("x", random_tensor({1, channels, size, size}, 13));
        const Session optimized = make_session(model, KernelTier::kOptimized);
        const Tensor expected = make_session(model, KernelTier::kReference).run(feed).at("out");
        EXPECT_TRUE(testing::tensors_close(optimized.run(feed).at("out"), expected, 1e-5, 1e-5))
            << "channels " << channels << " group " << group;
        const auto profile = profile_run(optimized, feed);
        EXPECT_TRUE(any_label_contains(profile, "fused with ai.parity::Swish")) << "channels " << channels;
        EXPECT_FALSE(any_label_contains(profile, "Sigmoid node"));
      }
}

TEST(ActivationRewrite, StandaloneSiluMatchesTheChainIncludingEdgeValues) {
  for (const Shape& shape : {Shape{}, Shape{0}, Shape{1}, Shape{7}, Shape{3, 1029}}) {
    Tensor x = random_tensor(shape, 14, -30, 30);
    const float edge[] = {0.0f, -0.0f, 88.0f, -88.0f, 1e-30f, -1e-30f, 100.0f, -100.0f, INFINITY, -INFINITY};
    for (int64_t i = 0; i < x.numel() && i < 10; ++i) x.data<float>()[i] = edge[i];
    TensorMap feed;
    feed.set("x", x);
    const auto model = silu_model(shape);
    const Session optimized = make_session(model, KernelTier::kOptimized);
    const Tensor expected = make_session(model, KernelTier::kReference).run(feed).at("out");
    const Tensor actual = optimized.run(feed).at("out");
    EXPECT_TRUE(testing::tensors_close(actual, expected, 1e-6, 1e-6)) << shape_to_string(shape);
    if (x.numel() > 0) {
      EXPECT_TRUE(any_label_contains(profile_run(optimized, feed), "ai.parity::Swish"));
    }
  }
  // NaN stays NaN.
  TensorMap feed;
  feed.set("x", Tensor::from_vector<float>({2}, {NAN, 1.0f}));
  const Tensor y = make_session(silu_model({2}), KernelTier::kOptimized).run(feed).at("out");
  EXPECT_TRUE(std::isnan(y.data<float>()[0]));
}

TEST(ActivationRewrite, ChainsThatDifferOrLeakIntermediatesAreLeftAlone) {
  TensorMap feed;
  feed.set("x", random_tensor({1, 4, 9, 9}, 7));
  for (const auto& model : {conv_hard_swish_model(2.5f), conv_hard_swish_model(3, /*expose_intermediate=*/true),
                            conv_silu_model(4, 9, 1, false, /*expose_sigmoid=*/true)}) {
    const Session optimized = make_session(model, KernelTier::kOptimized);
    const auto profile = profile_run(optimized, feed);
    EXPECT_FALSE(any_label_contains(profile, "ai.parity")) << "rewrote a chain that is not HardSwish";
    const TensorMap reference = make_session(model, KernelTier::kReference).run(feed);
    const TensorMap actual = optimized.run(feed);
    for (const auto& [name, t] : reference) EXPECT_TRUE(testing::tensors_close(actual.at(name), t, 1e-5, 1e-5)) << name;
  }
}

TEST(ActivationRewrite, HooksStillSeeTheChainsIntermediates) {
  const Session optimized = make_session(conv_hard_swish_model(), KernelTier::kOptimized);
  TensorMap feed;
  feed.set("x", random_tensor({1, 4, 9, 9}, 8));
  std::vector<std::string> seen;
  RunOptions observe;
  observe.hook = [&](const std::string& name, const Value&) { seen.push_back(name); };
  optimized.run(feed, observe);
  EXPECT_EQ(seen, (std::vector<std::string>{"y", "shifted", "clipped", "scaled", "out"}));
}

TEST(ActivationRewrite, PrivateKernelsRoundExactlyAsTheChainDoes) {
  const Tensor x = random_tensor({4097}, 9, -8, 8);
  Tensor hard_swish(DType::kFloat32, x.shape()), gelu(DType::kFloat32, x.shape());
  const float sqrt2 = 1.41421356f;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float v = x.data<float>()[i];
    const float shifted = v + 3.0f;
    const float clipped = std::min(std::max(shifted, 0.0f), 6.0f);
    hard_swish.data<float>()[i] = (v * clipped) / 6.0f;
    gelu.data<float>()[i] = (v * (std::erf(v / sqrt2) + 1.0f)) * 0.5f;
  }
  testing::OpTester("HardSwish", 1, "ai.parity").input(x).output(hard_swish).tolerance(0, 0).run();
  testing::OpTester("Gelu", 1, "ai.parity").attr("sqrt2", sqrt2).input(x).output(gelu).tolerance(0, 0).run();
  Tensor silu(DType::kFloat32, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float v = x.data<float>()[i];
    const float s = v >= 0.0f ? 1.0f / (1.0f + std::exp(-v)) : std::exp(v) / (1.0f + std::exp(v));
    silu.data<float>()[i] = v * s;
  }
  testing::OpTester("Swish", 1, "ai.parity").input(x).output(silu).tolerance(0, 0).run();
}

}  // namespace
}  // namespace parity::runtime
