// Graph IR: editing, toposort, cleanup, subgraphs with outer-scope references, lookups.
#include "model/graph.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "model/model.h"
#include "model/shape_inference.h"
#include "model/test_models.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

using model::Graph;
using model::Node;
using model::Value;

std::shared_ptr<Graph> graph_of(const onnx::ModelProto& proto) {
  return Graph::from_model(model::Model(std::make_unique<onnx::ModelProto>(proto)));
}

TEST(OnnxGraph, ImportsValuesNodesAndTypes) {
  auto g = graph_of(add_relu_model());
  ASSERT_EQ(g->nodes.size(), 2u);
  EXPECT_EQ(g->nodes[0]->op_type, "Add");
  EXPECT_EQ(g->nodes[0]->inputs[1]->name, "W");
  EXPECT_TRUE(g->nodes[0]->inputs[1]->is_constant());
  EXPECT_EQ(g->nodes[0]->inputs[1]->values().to_vector<float>(), (std::vector<float>{1.f, -2.f, 3.f, -4.f}));
  EXPECT_EQ(g->inputs[0]->dtype, DType::kFloat32);
  EXPECT_EQ(g->inputs[0]->shape, DimShape({4}));
  EXPECT_TRUE(g->tensor("sum")->shape.unknown_rank);
  EXPECT_EQ(g->producers().at(g->tensor("sum").get())->name, "add0");
  EXPECT_EQ(g->consumers().at(g->tensor("sum").get()).at(0)->name, "relu0");
  EXPECT_EQ(g->opset(), 13);
}

TEST(OnnxGraph, TensorLookupSuggestsNearNames) {
  auto g = graph_of(add_relu_model());
  EXPECT_EQ(g->find_tensor("nope"), nullptr);
  try {
    g->tensor("summ");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("did you mean 'sum'"), std::string::npos) << e.what();
  }
}

TEST(OnnxGraph, EditsExportAndReload) {
  auto g = graph_of(add_relu_model());
  // Insert y2 = Neg(sum) as a second output, replace W's values, rename x.
  auto y2 = Value::variable("y2", DType::kFloat32, DimShape({4}));
  auto neg = std::make_shared<Node>("Neg", std::vector<model::ValuePtr>{g->tensor("sum")}, std::vector<model::ValuePtr>{y2}, "neg0");
  g->nodes.push_back(neg);
  g->outputs.push_back(y2);
  g->tensor("W")->set_values(Tensor::from_vector<float>({4}, {9, 9, 9, 9}));
  g->tensor("x")->name = "input";
  auto scale = Value::constant("scale", Tensor::scalar<float>(2.0f));
  g->nodes[0]->attrs["note"] = model::Attribute{.name = "note", .type = model::AttrType::kString, .s = "edited"};
  g->nodes[1]->inputs[0] = g->nodes[0]->outputs[0];
  auto mul = std::make_shared<Node>("Mul", std::vector<model::ValuePtr>{y2, scale},
                                    std::vector<model::ValuePtr>{Value::variable("y3")}, "mul0");
  g->nodes.push_back(mul);
  g->outputs.push_back(mul->outputs[0]);

  model::Model exported = g->to_model();
  auto reloaded = Graph::from_model(model::load_model_from_bytes(model::serialize_model(exported)).value());
  EXPECT_EQ(reloaded->inputs[0]->name, "input");
  EXPECT_EQ(reloaded->nodes[0]->inputs[0]->name, "input");
  EXPECT_EQ(reloaded->tensor("W")->values().to_vector<float>(), (std::vector<float>{9, 9, 9, 9}));
  EXPECT_EQ(reloaded->tensor("scale")->values().to_vector<float>(), (std::vector<float>{2.0f}));
  EXPECT_EQ(reloaded->nodes[0]->attrs.at("note").s, "edited");
  ASSERT_EQ(reloaded->outputs.size(), 3u);
  EXPECT_EQ(reloaded->outputs[1]->dtype, DType::kFloat32);
  EXPECT_EQ(reloaded->outputs[1]->shape, DimShape({4}));
}

TEST(OnnxGraph, ToposortIsStableAndFixesOrder) {
  onnx::ModelProto proto = add_relu_model();
  proto.mutable_graph()->mutable_node()->SwapElements(0, 1);  // Relu before its producer
  auto g = graph_of(proto);
  g->toposort();
  EXPECT_EQ(g->nodes[0]->name, "add0");
  EXPECT_EQ(g->nodes[1]->name, "relu0");
  g->toposort();
  EXPECT_EQ(g->nodes[0]->name, "add0");
}

TEST(OnnxGraph, CleanupDropsDeadNodesAndInitializers) {
  onnx::ModelProto proto = add_relu_model();
  auto* g = proto.mutable_graph();
  add_tensor_info(g->add_input(), "unused_input", onnx::TensorProto::FLOAT, {1});
  auto* dead_init = g->add_initializer();
  *dead_init = g->initializer(0);
  dead_init->set_name("dead_weights");
  add_node(g, "Neg", {"dead_weights"}, {"dead_out"}, "dead_node");
  auto graph = graph_of(proto);
  graph->cleanup();
  ASSERT_EQ(graph->nodes.size(), 2u);
  EXPECT_EQ(graph->initializers.size(), 1u);
  EXPECT_EQ(graph->inputs.size(), 2u);
  graph->cleanup(/*remove_unused_inputs=*/true);
  EXPECT_EQ(graph->inputs.size(), 1u);
}

/// cond ? (x + W) : (x - W) where both branches read x and W from the outer graph.
onnx::ModelProto if_model() {
  onnx::ModelProto m = add_relu_model();
  auto* g = m.mutable_graph();
  g->clear_node();
  add_tensor_info(g->add_input(), "cond", onnx::TensorProto::BOOL, {});
  auto* node = add_node(g, "If", {"cond"}, {"branch_out"}, "if0");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* attr = node->add_attribute();
    attr->set_name(branch);
    attr->set_type(onnx::AttributeProto::GRAPH);
    auto* sub = attr->mutable_g();
    sub->set_name(branch);
    add_node(sub, std::string(branch) == "then_branch" ? "Add" : "Sub", {"x", "W"}, {std::string(branch) + "_y"});
    add_tensor_info(sub->add_output(), std::string(branch) + "_y", onnx::TensorProto::FLOAT, {4});
  }
  add_node(g, "Relu", {"branch_out"}, {"y"}, "relu0");
  add_node(g, "Neg", {"x"}, {"unused"}, "dead");
  return m;
}

TEST(OnnxGraph, SubgraphsShareOuterValues) {
  auto g = graph_of(if_model());
  auto& then_branch = g->nodes[0]->subgraphs.at("then_branch");
  ASSERT_EQ(then_branch->nodes.size(), 1u);
  // The branch's 'x' and 'W' are the outer graph's objects.
  EXPECT_EQ(then_branch->nodes[0]->inputs[0], g->tensor("x"));
  EXPECT_EQ(then_branch->nodes[0]->inputs[1], g->tensor("W"));
  auto refs = then_branch->outer_references();
  ASSERT_EQ(refs.size(), 2u);
  // W is only used inside the branches: cleanup must keep it; the dead Neg goes.
  g->cleanup();
  EXPECT_EQ(g->nodes.size(), 2u);
  EXPECT_EQ(g->initializers.size(), 1u);
  auto consumers = g->consumers();
  EXPECT_EQ(consumers.at(g->tensor("W").get()).at(0)->name, "if0");
  EXPECT_EQ(g->node_count(), 4u);

  // Renaming an outer value is seen by the subgraph on export.
  g->tensor("W")->name = "weights";
  auto reloaded = graph_of(g->to_model().proto());
  EXPECT_EQ(reloaded->nodes[0]->subgraphs.at("else_branch")->nodes[0]->inputs[1]->name, "weights");
  EXPECT_TRUE(reloaded->nodes[0]->subgraphs.at("else_branch")->nodes[0]->inputs[1]->is_constant());
}

TEST(OnnxGraph, ExportIsLosslessForUneditedModels) {
  onnx::ModelProto proto = if_model();
  proto.set_doc_string("doc");
  auto* kv = proto.add_metadata_props();
  kv->set_key("author");
  kv->set_value("tests");
  proto.mutable_graph()->mutable_node(0)->set_doc_string("the if");
  auto* vi = proto.mutable_graph()->add_value_info();
  add_tensor_info(vi, "branch_out", onnx::TensorProto::FLOAT, {-1});
  auto g = graph_of(proto);
  EXPECT_EQ(g->to_model().proto().SerializeAsString(), proto.SerializeAsString());
}

TEST(OnnxShapeInference, DataPropagationGivesStaticShapes) {
  // y = Reshape(x, Shape(x)) with x [2, 3]: the reshape target is known only through data propagation.
  onnx::ModelProto m = empty_model(15);
  auto* g = m.mutable_graph();
  add_tensor_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  g->add_output()->set_name("y");
  add_node(g, "Shape", {"x"}, {"s"});
  add_node(g, "Reshape", {"x", "s"}, {"y"});
  onnx::ModelProto with_prop = m;
  model::infer_shapes(with_prop, /*data_prop=*/true);
  auto g2 = graph_of(with_prop);
  EXPECT_EQ(g2->outputs[0]->shape, DimShape({2, 3}));
  EXPECT_EQ(g2->tensor("s")->shape, DimShape({2}));
}

}  // namespace
}  // namespace parity::testing
