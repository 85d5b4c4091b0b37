#include <algorithm>

#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include "../model/test_models.h"
#include "tools/fold.h"
#include "model/transforms/insert.h"
#include "model/transforms/opset.h"
#include "../model/transforms/transform_test_util.h"

namespace parity::model::transforms {
namespace {

using testing::add_node;
using testing::add_tensor_info;

// y = Reshape(x, Shape(x)) * (Constant(2) + Constant(3)): Constant nodes, a computable Add, and a
// Shape of a static input.
model::Model foldable_model() {
  onnx::ModelProto m = testing::empty_model();
  auto* g = m.mutable_graph();
  add_tensor_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  add_tensor_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {2, 3});
  for (auto [name, v] : {std::pair{"two", 2.f}, std::pair{"three", 3.f}}) {
    auto* c = add_node(g, "Constant", {}, {name}, std::string(name) + "_node");
    auto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    a->mutable_t()->add_float_data(v);
  }
  add_node(g, "Add", {"two", "three"}, {"five"}, "add_consts");
  add_node(g, "Shape", {"x"}, {"shape"}, "shape");
  add_node(g, "Reshape", {"x", "shape"}, {"x2"}, "reshape");
  add_node(g, "Mul", {"x2", "five"}, {"y"}, "mul");
  return model::Model(std::make_unique<onnx::ModelProto>(m));
}

TEST(Fold, ConstantNodesAndShapesFold) {
  tools::FoldReport report;
  auto g = tools::fold_constants(foldable_model(), {}, &report);
  EXPECT_EQ(report.nodes_before, 6u);
  EXPECT_EQ(report.constant_nodes, 2u);
  EXPECT_EQ(report.shape_nodes, 1u);
  EXPECT_NO_THROW(onnx::checker::check_model(g->to_model().proto()));
  // Add(2, 3) is computed by the runtime: Reshape and Mul remain.
  EXPECT_EQ(report.nodes_after, 2u);
  const model::ValuePtr five = g->find_tensor("five");
  ASSERT_TRUE(five && five->is_constant());
  EXPECT_EQ(five->values().value_as_double(0), 5.0);
}

TEST(Fold, NoShapeFoldingWhenDisabled) {
  tools::FoldOptions options;
  options.fold_shapes = false;
  tools::FoldReport report;
  tools::fold_constants(foldable_model(), options, &report);
  EXPECT_EQ(report.shape_nodes, 0u);
}

TEST(Fold, OverrideInputShapesRejectsUnknownInputs) {
  try {
    tools::fold_constants(foldable_model(), {}, nullptr, {{"xx", DimShape{2, 3}}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotFound);
    EXPECT_NE(std::string(e.what()).find("did you mean 'x'"), std::string::npos) << e.what();
  }
}

// PP-OCRv4 detection: 342 Constant nodes. Folding reduces the node count and the outputs stay
// equal within 1e-5 on seeded inputs.
TEST(Fold, OcrDetectorFoldsAndMatches) {
  const auto path = testing::ocr_model("ch_PP-OCRv4_det_infer.onnx");
  PARITY_REQUIRE_FILE(path);
  model::Model model = model::load_model(path).value();
  tools::FoldReport report;
  auto g = tools::fold_constants(model, {}, &report);
  EXPECT_EQ(report.nodes_before, 672u);
  EXPECT_EQ(report.constant_nodes, 342u);
  EXPECT_LE(report.nodes_after, 672u - 342u);
  std::printf("[ measured ] PP-OCRv4 det nodes %zu -> %zu (%zu computed values, %d passes)\n", report.nodes_before,
              report.nodes_after, report.evaluated, report.passes);
  testing::TempDir tmp;
  model::save_model(g->to_model(), tmp / "folded.onnx").throw_if_error();
  EXPECT_NO_THROW(check_saved_model(tmp / "folded.onnx"));
  PARITY_REQUIRE_RUNNER("ort");
  const TensorMap feed{{"x", testing::seeded_uniform({1, 3, 64, 96}, 4)}};
  EXPECT_LE(testing::max_abs_diff(testing::run_with_ort(tmp / "folded.onnx", feed).begin()->second,
                                  testing::run_with_ort(path, feed).begin()->second),
            1e-5);
}

TEST(Insert, ReplacesTheSubgraphBetweenTensors) {
  // x -> Relu -> a -> Neg -> b -> Abs -> y; replace Relu+Neg (x..b) with one Sigmoid.
  onnx::ModelProto m = testing::empty_model();
  auto* pg = m.mutable_graph();
  add_tensor_info(pg->add_input(), "x", onnx::TensorProto::FLOAT, {4});
  add_tensor_info(pg->add_output(), "y", onnx::TensorProto::FLOAT, {4});
  add_node(pg, "Relu", {"x"}, {"a"}, "relu");
  add_node(pg, "Neg", {"a"}, {"b"}, "neg");
  add_node(pg, "Abs", {"b"}, {"y"}, "abs");
  auto g = model::Graph::from_model(model::Model(std::make_unique<onnx::ModelProto>(m)));
  InsertOptions options;
  options.inputs = {"x"};
  options.outputs = {"b"};
  options.op = "LeakyRelu";
  options.name = "leaky";
  options.attrs = {"alpha=1"};  // the schema says float: 1 becomes 1.0f
  insert_node(*g, options);
  ASSERT_EQ(g->nodes.size(), 2u);
  EXPECT_EQ(g->nodes[0]->op_type, "LeakyRelu");
  EXPECT_EQ(g->nodes[0]->attrs.at("alpha").type, model::AttrType::kFloat);
  EXPECT_EQ(g->nodes[0]->attrs.at("alpha").f, 1.0f);
  EXPECT_EQ(g->nodes[1]->op_type, "Abs");
  EXPECT_NO_THROW(onnx::checker::check_model(g->to_model().proto()));
}

TEST(Insert, UnknownOpGoesInUncheckedAndBadAttributesAreUserErrors) {
  auto g = model::Graph::from_model(model::Model(std::make_unique<onnx::ModelProto>(testing::add_relu_model())));
  InsertOptions options;
  options.inputs = {"x"};
  options.outputs = {"sum"};
  // As Polygraphy: an op the default domain lacks is inserted there (with a warning), unchecked.
  options.op = "Sigmod";
  options.attrs = {"alpha=0.5"};
  {
    auto copy = model::Graph::from_model(g->to_model());
    EXPECT_FALSE(insert_node(*copy, options));
    const auto it = std::find_if(copy->nodes.begin(), copy->nodes.end(), [](const auto& n) { return n->op_type == "Sigmod"; });
    ASSERT_NE(it, copy->nodes.end());
    EXPECT_EQ((*it)->domain, "");
    EXPECT_EQ((*it)->attrs.at("alpha").type, model::AttrType::kFloat);
  }
  options.op = "LeakyRelu";
  options.attrs = {"alpah=0.2"};
  try {
    insert_node(*g, options);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'alpha'"), std::string::npos) << e.what();
  }
  options.attrs = {};
  options.inputs = {"nope"};
  EXPECT_THROW(insert_node(*g, options), Error);
}

}  // namespace
}  // namespace parity::model::transforms
