// Conv -> BatchNormalization pairs fold into the Conv's weights in fused plans, with the same
// numbers as running both nodes, and only when the normalization is inference-mode and constant.
#include <gtest/gtest.h>

#include "support/model_builder.h"
#include "runtime/ops/op_tester.h"
#include "runtime/session.h"
#include "runtime/session_test_util.h"

namespace parity::runtime {
namespace {

using testing::ModelBuilder;
using testing::random_uniform;

struct Variant {
  bool conv_bias = true;
  bool expose_conv_output = false;
  int64_t training_mode = 0;
};

/// x -> Conv(3x3, pad 1) -> BatchNormalization -> Relu -> out
onnx::ModelProto conv_bn_relu(const Variant& v) {
  ModelBuilder b(15);
  b.input("x", DType::kFloat32, {2, 3, 10, 10}).output("out", DType::kFloat32, {2, 8, 10, 10});
  if (v.expose_conv_output) b.output("y", DType::kFloat32, {2, 8, 10, 10});
  b.initializer("w", random_uniform({8, 3, 3, 3}, 1, -0.5f, 0.5f)).initializer("bias", random_uniform({8}, 2, -1, 1));
  b.initializer("gamma", random_uniform({8}, 3, 0.5f, 1.5f)).initializer("beta", random_uniform({8}, 4, -1, 1));
  b.initializer("mean", random_uniform({8}, 5, -0.5f, 0.5f)).initializer("var", random_uniform({8}, 6, 0.2f, 2));
  auto& conv = v.conv_bias ? b.node("Conv", {"x", "w", "bias"}, {"y"}, "conv") : b.node("Conv", {"x", "w"}, {"y"}, "conv");
  auto* pads = conv.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int k = 0; k < 4; ++k) pads->add_ints(1);
  auto& bn = b.node("BatchNormalization", {"y", "gamma", "beta", "mean", "var"}, {"normalized"}, "bn");
  if (v.training_mode) testing::add_int_attr(bn, "training_mode", v.training_mode);
  b.node("Relu", {"normalized"}, {"out"}, "relu");
  return b.model();
}

Session make_session(const onnx::ModelProto& model, KernelTier tier) {
  return testing::session_with_kernels(model, tier);
}

std::vector<std::string> executed(const Session& s, const TensorMap& feed) { return testing::executed_node_labels(s, feed); }

bool mentions(const std::vector<std::string>& labels, const std::string& text) {
  return testing::any_label_contains(labels, text);
}

void expect_same_outputs(const onnx::ModelProto& model, const TensorMap& feed) {
  const TensorMap expected = make_session(model, KernelTier::kReference).run(feed);
  const TensorMap actual = make_session(model, KernelTier::kOptimized).run(feed);
  for (const auto& [name, t] : expected)
    EXPECT_TRUE(testing::tensors_close(actual.at(name), t, 1e-5, 1e-5)) << name;
}

TensorMap feed() {
  TensorMap f;
  f.set("x", random_uniform({2, 3, 10, 10}, 7, -2, 2));
  return f;
}

TEST(BatchNormFolding, FoldsIntoTheConvWithAndWithoutBias) {
  for (bool bias : {true, false}) {
    const auto model = conv_bn_relu({.conv_bias = bias});
    expect_same_outputs(model, feed());
    const auto labels = executed(make_session(model, KernelTier::kOptimized), feed());
    EXPECT_TRUE(mentions(labels, "folded into its weights")) << "bias " << bias;
    for (const auto& l : labels) EXPECT_NE(l.rfind("BatchNormalization", 0), 0u) << l;
#if PARITY_HAVE_DNNL
    EXPECT_EQ(labels.size(), 1u) << "Relu should fuse into the folded Conv";
#endif
  }
}

TEST(BatchNormFolding, LeavesTrainingModeAndObservedConvOutputsAlone) {
  for (const Variant& v : {Variant{.training_mode = 1}, Variant{.expose_conv_output = true}}) {
    const auto model = conv_bn_relu(v);
    expect_same_outputs(model, feed());
    EXPECT_FALSE(mentions(executed(make_session(model, KernelTier::kOptimized), feed()), "folded"));
  }
}

TEST(BatchNormFolding, HooksSeeTheConvOutput) {
  const Session s = make_session(conv_bn_relu({}), KernelTier::kOptimized);
  std::vector<std::string> seen;
  RunOptions observe;
  observe.hook = [&](const std::string& name, const Value&) { seen.push_back(name); };
  s.run(feed(), observe);
  EXPECT_EQ(seen, (std::vector<std::string>{"y", "normalized", "out"}));
}

}  // namespace
}  // namespace parity::runtime
