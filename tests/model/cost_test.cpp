// model::count_cost: the MACs, parameters and activation bytes of each counted op kind against
// hand-computed figures, dims fixed by input_shapes, and unknown shapes flagged.
#include "model/cost.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "model/test_models.h"

namespace parity::testing {
namespace {

void add_initializer(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t numel = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    numel *= d;
  }
  t->set_raw_data(std::string(static_cast<size_t>(numel) * sizeof(float), '\0'));
}

void set_ints(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

void set_int(onnx::NodeProto* node, const std::string& name, int64_t value) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

// x [N,3,8,8] -> Conv 3x3 pad 1 (4 out) -> depthwise Conv 3x3 stride 2 (group 4) -> Flatten
// -> Gemm [64 -> 10] -> MatMul [10 -> 5]; N is dynamic.
onnx::ModelProto cnn(int64_t batch) {
  onnx::ModelProto m = empty_model(17);
  auto* g = m.mutable_graph();
  add_tensor_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {batch, 3, 8, 8});
  add_tensor_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {batch, 5});
  add_initializer(g, "w1", {4, 3, 3, 3});
  add_initializer(g, "b1", {4});
  add_initializer(g, "w2", {4, 1, 3, 3});
  add_initializer(g, "wg", {64, 10});
  add_initializer(g, "wm", {10, 5});
  auto* conv = add_node(g, "Conv", {"x", "w1", "b1"}, {"c1"}, "conv");
  set_ints(conv, "pads", {1, 1, 1, 1});
  set_ints(conv, "kernel_shape", {3, 3});
  auto* dw = add_node(g, "Conv", {"c1", "w2"}, {"c2"}, "depthwise");
  set_ints(dw, "pads", {1, 1, 1, 1});
  set_ints(dw, "strides", {2, 2});
  set_int(dw, "group", 4);
  add_node(g, "Flatten", {"c2"}, {"f"}, "flatten");
  add_node(g, "Gemm", {"f", "wg"}, {"h"}, "gemm");
  add_node(g, "MatMul", {"h", "wm"}, {"y"}, "matmul");
  return m;
}

TEST(ModelCost, ConvGemmMatMulCountedByHand) {
  const model::ModelCost cost = model::count_cost(cnn(1));
  ASSERT_EQ(cost.nodes.size(), 5u);
  // Conv: 4x8x8 outputs, each 3*3*3 MACs.
  EXPECT_EQ(cost.nodes[0].macs, 4 * 8 * 8 * 27);
  EXPECT_EQ(cost.nodes[0].params, 4 * 27 + 4);
  EXPECT_EQ(cost.nodes[0].activation_bytes, 4 * 8 * 8 * 4);
  // Depthwise: 4x4x4 outputs, each 1*3*3 MACs.
  EXPECT_EQ(cost.nodes[1].macs, 4 * 4 * 4 * 9);
  EXPECT_EQ(cost.nodes[2].macs, 0);  // Flatten moves no arithmetic
  EXPECT_EQ(cost.nodes[3].macs, 64 * 10);
  EXPECT_EQ(cost.nodes[4].macs, 10 * 5);
  EXPECT_EQ(cost.macs, 4 * 8 * 8 * 27 + 4 * 4 * 4 * 9 + 64 * 10 + 10 * 5);
  EXPECT_DOUBLE_EQ(cost.flops(), 2.0 * static_cast<double>(cost.macs));
  EXPECT_EQ(cost.params, 4 * 27 + 4 + 4 * 9 + 640 + 50);
  EXPECT_EQ(cost.nodes_with_unknown_shapes, 0);
  EXPECT_NE(model::cost_table_text(cost).find("Total: "), std::string::npos);
}

TEST(ModelCost, InputShapesFixDynamicDims) {
  const onnx::ModelProto dynamic = cnn(-1);
  const model::ModelCost unknown = model::count_cost(dynamic);
  EXPECT_GT(unknown.nodes_with_unknown_shapes, 0);
  EXPECT_FALSE(unknown.nodes[0].shapes_known);
  const model::ModelCost batch3 = model::count_cost(dynamic, {{"x", {3, 3, 8, 8}}});
  EXPECT_EQ(batch3.nodes_with_unknown_shapes, 0);
  EXPECT_EQ(batch3.macs, 3 * model::count_cost(cnn(1)).macs);
}

TEST(ModelCost, RecurrentLayersCountEveryGateStepAndDirection) {
  for (const auto& [op, gates] : std::vector<std::pair<std::string, int64_t>>{{"RNN", 1}, {"GRU", 3}, {"LSTM", 4}}) {
    onnx::ModelProto m = empty_model(17);
    auto* g = m.mutable_graph();
    const int64_t steps = 7, batch = 2, features = 5, hidden = 6, dirs = 2;
    add_tensor_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {steps, batch, features});
    add_tensor_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {steps, dirs, batch, hidden});
    add_initializer(g, "w", {dirs, gates * hidden, features});
    add_initializer(g, "r", {dirs, gates * hidden, hidden});
    auto* node = add_node(g, op, {"x", "w", "r"}, {"y"}, "rnn");
    set_int(node, "hidden_size", hidden);
    auto* direction = node->add_attribute();
    direction->set_name("direction");
    direction->set_type(onnx::AttributeProto::STRING);
    direction->set_s("bidirectional");
    const model::ModelCost cost = model::count_cost(m);
    EXPECT_EQ(cost.macs, dirs * steps * batch * gates * hidden * (features + hidden)) << op;
    EXPECT_EQ(cost.nodes[0].params, dirs * gates * hidden * (features + hidden)) << op;
  }
}

TEST(ModelCost, FormatsCountsWithSiSuffixes) {
  EXPECT_EQ(model::format_count(12), "12");
  EXPECT_EQ(model::format_count(4100), "4.1 k");
  EXPECT_EQ(model::format_count(4.09e9), "4.09 G");
}

}  // namespace
}  // namespace parity::testing
