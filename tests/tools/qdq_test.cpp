// QDQ models (tools/qdq.h): export writes per-tensor activation pairs and per-channel int8 weights
// on the axes parity's int8 kernels use; an int8 plan of the exported model takes the model's
// scales (no calibration) and computes what the calibrated plan computes; bad scales are refused
// naming the node.
#include "tools/qdq.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <onnx/onnx_pb.h>

#include "compare/data_loader.h"
#include "model/proto_convert.h"
#include "runtime/reduced_precision.h"
#include "runtime/subgraph.h"
#include "support/model_builder.h"
#include "support/test_support.h"
#include "tools/calibration.h"
#include "tools/plan_build.h"

namespace parity {
namespace {

model::Model mobilenet() {
  return model::load_model(testing::source_dir() / ".cache/bench-models/mobilenet_v2.onnx").value();
}

Tensor seeded_input(const Shape& shape, uint32_t seed) {
  Tensor t(DType::kFloat32, shape);
  uint32_t state = seed;
  for (float& v : t.values<float>()) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / static_cast<float>(1 << 24) * 2.0f - 1.0f;
  }
  return t;
}

std::unique_ptr<compare::FeedSource> image_feeds() {
  return std::make_unique<compare::FeedList>(std::vector<TensorMap>{
      TensorMap{{"input", seeded_input({1, 3, 224, 224}, 1)}}, TensorMap{{"input", seeded_input({1, 3, 224, 224}, 2)}}});
}

std::map<std::string, float> mobilenet_scales(const model::Model& model) {
  tools::PlanBuildOptions options;
  options.calibration_feeds = image_feeds;
  return tools::calibration_scales(model, {}, options);
}

const onnx::NodeProto* producer(const onnx::GraphProto& g, const std::string& value) {
  for (const auto& n : g.node())
    for (const auto& o : n.output())
      if (o == value) return &n;
  return nullptr;
}

Tensor initializer(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& t : g.initializer())
    if (t.name() == name) return model::tensor_from_proto(t);
  ADD_FAILURE() << "no initializer " << name;
  return {};
}

int64_t axis_of(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute())
    if (a.name() == "axis") return a.i();
  return 1;
}

TEST(Qdq, ConvolutionsGetActivationPairsAndPerOutputChannelInt8Weights) {
  model::Model model = mobilenet();
  const auto scales = mobilenet_scales(model);
  const tools::QdqExportReport report = tools::export_qdq(model, scales);
  EXPECT_EQ(report.layers, 53);
  EXPECT_EQ(report.weights, 53);
  EXPECT_EQ(report.skipped_layers, 0);
  const auto& g = model.proto().graph();
  int convs = 0;
  for (const auto& node : g.node()) {
    if (node.op_type() != "Conv") continue;
    ++convs;
    const onnx::NodeProto* x_dq = producer(g, node.input(0));
    ASSERT_NE(x_dq, nullptr);
    ASSERT_EQ(x_dq->op_type(), "DequantizeLinear") << node.name();
    const onnx::NodeProto* x_q = producer(g, x_dq->input(0));
    ASSERT_EQ(x_q->op_type(), "QuantizeLinear");
    EXPECT_FLOAT_EQ(initializer(g, x_q->input(1)).data<float>()[0], scales.at(x_q->input(0)));
    EXPECT_EQ(initializer(g, x_q->input(2)).dtype(), DType::kInt8);
    const onnx::NodeProto* w_dq = producer(g, node.input(1));
    ASSERT_EQ(w_dq->op_type(), "DequantizeLinear") << node.name();
    EXPECT_EQ(axis_of(*w_dq), 0);
    const Tensor w = initializer(g, w_dq->input(0));
    EXPECT_EQ(w.dtype(), DType::kInt8);
    EXPECT_EQ(initializer(g, w_dq->input(1)).numel(), w.dim(0));
    if (node.input_size() > 2) {
      EXPECT_EQ(producer(g, node.input(2)), nullptr) << "biases stay float initializers";
    }
  }
  EXPECT_EQ(convs, 52);
  EXPECT_GE(model.opset(""), 13);
}

TEST(Qdq, GemmAndMatMulWeightsAreScaledAlongTheirOutputChannels) {
  testing::ModelBuilder b;
  b.input("x", DType::kFloat32, {2, 4}).output("y", DType::kFloat32, {2, 3}).output("z", DType::kFloat32, {2, 3});
  b.initializer("w_kn", seeded_input({4, 3}, 3)).initializer("w_nk", seeded_input({3, 4}, 4));
  b.node("MatMul", {"x", "w_kn"}, {"y"}, "matmul");
  testing::add_int_attr(b.node("Gemm", {"x", "w_nk"}, {"z"}, "gemm"), "transB", 1);
  model::Model model(std::make_unique<onnx::ModelProto>(b.model()));
  tools::export_qdq(model, {{"x", 0.02f}});
  const auto& g = model.proto().graph();
  for (const auto& node : g.node()) {
    if (node.op_type() != "MatMul" && node.op_type() != "Gemm") continue;
    const onnx::NodeProto* w_dq = producer(g, node.input(1));
    ASSERT_EQ(w_dq->op_type(), "DequantizeLinear");
    // MatMul [K, N]: axis 1 (N); Gemm with transB [N, K]: axis 0 (N); both 3 channels.
    EXPECT_EQ(axis_of(*w_dq), node.op_type() == "MatMul" ? 1 : 0);
    EXPECT_EQ(initializer(g, w_dq->input(1)).numel(), 3);
  }
  // Both layers read one activation pair.
  int quantize_nodes = 0;
  for (const auto& node : g.node()) quantize_nodes += node.op_type() == "QuantizeLinear";
  EXPECT_EQ(quantize_nodes, 1);
}

TEST(Qdq, Int8PlanOfAQdqModelUsesTheModelsScalesAndComputesAsTheCalibratedPlan) {
  const model::Model original = mobilenet();
  const auto scales = mobilenet_scales(original);
  model::Model qdq = original;
  tools::export_qdq(qdq, scales);

  tools::PlanBuildOptions from_model;
  from_model.precision.int8 = true;  // no calibration feeds: a calibration would throw
  const tools::BuiltPlan built = tools::build_plan(qdq, {}, from_model);
  int int8_layers = 0;
  for (const auto& node : built.session.plan().nodes_) {
    if (node.folded || node.precision != DType::kInt8) continue;
    ++int8_layers;
    const auto* recorded = runtime::int8_scales_of(*node.kernel);
    ASSERT_NE(recorded, nullptr) << node.label;
    ASSERT_TRUE(recorded->count(0)) << node.label;
    EXPECT_EQ(recorded->at(0), scales.at(node.spec.inputs[0])) << node.label;
  }
  EXPECT_EQ(int8_layers, 53);

  tools::PlanBuildOptions calibrated;
  calibrated.precision.int8 = true;
  calibrated.precision.int8_scales = scales;
  calibrated.calibration_feeds = image_feeds;
  const tools::BuiltPlan reference = tools::build_plan(original, {}, calibrated);
  const TensorMap feed{{"input", seeded_input({1, 3, 224, 224}, 7)}};
  const Tensor a = built.session.run(feed).at("logits"), b = reference.session.run(feed).at("logits");
  ASSERT_EQ(a.numel(), b.numel());
  for (int64_t i = 0; i < a.numel(); ++i) EXPECT_NEAR(a.data<float>()[i], b.data<float>()[i], 1e-5f) << i;
}

TEST(Qdq, ZeroNegativeOrNanScalesAreRefusedNamingTheNode) {
  model::Model model = mobilenet();
  tools::export_qdq(model, mobilenet_scales(model));
  for (float bad : {0.0f, -0.5f, std::numeric_limits<float>::quiet_NaN()}) {
    model::Model broken = model;
    auto& g = *broken.proto().mutable_graph();
    const onnx::NodeProto* quantize = nullptr;
    for (const auto& n : g.node())
      if (n.op_type() == "QuantizeLinear") quantize = &n;
    ASSERT_NE(quantize, nullptr);
    for (auto& t : *g.mutable_initializer())
      if (t.name() == quantize->input(1)) {
        const std::string name = t.name();  // tensor_to_proto clears the proto first
        model::tensor_to_proto(Tensor::scalar<float>(bad), &t, name);
      }
    try {
      tools::check_qdq_scales(broken, "m.qdq.onnx");
      ADD_FAILURE() << "scale " << bad << " accepted";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("'m.qdq.onnx'"), std::string::npos) << message;
      EXPECT_NE(message.find("QuantizeLinear node '" + quantize->name() + "'"), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
    tools::PlanBuildOptions int8;
    int8.precision.int8 = true;
    EXPECT_THROW(tools::build_plan(broken, {}, int8), Error);
  }
}

TEST(Qdq, AsymmetricUint8PairsAreLeftToTheRuntime) {
  testing::ModelBuilder b;
  b.input("x", DType::kFloat32, {1, 4}).output("y", DType::kFloat32, {1, 4});
  b.initializer("s", Tensor::scalar<float>(0.1f)).initializer("zp", Tensor::scalar<uint8_t>(128));
  b.node("QuantizeLinear", {"x", "s", "zp"}, {"q"}, "q");
  b.node("DequantizeLinear", {"q", "s", "zp"}, {"y"}, "dq");
  model::Model model(std::make_unique<onnx::ModelProto>(b.model()));
  const std::string before = model.proto().SerializeAsString();
  EXPECT_FALSE(tools::import_qdq(model).has_value());
  EXPECT_EQ(model.proto().SerializeAsString(), before);
}

}  // namespace
}  // namespace parity
