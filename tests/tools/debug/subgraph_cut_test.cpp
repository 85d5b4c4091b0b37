// Cutting a model to node subsets: which tensors become inputs and outputs, the recorded values
// that feed them, and that every cut is a model that runs and reproduces the full model's values.
#include "tools/debug/subgraph_cut.h"

#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include "../../model/test_models.h"
#include "runtime/session.h"
#include "tools/debug/reduce.h"

namespace parity::tools::debug {
namespace {

// x -> Relu -> a; a -> Neg -> b; a -> Exp -> c; Add(b, c) -> y; b -> Abs -> z (a second output).
model::Model branchy_model() {
  onnx::ModelProto m = testing::empty_model();
  auto* g = m.mutable_graph();
  testing::add_tensor_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  testing::add_tensor_info(g->add_output(), "y", onnx::TensorProto::FLOAT, {2, 3});
  testing::add_tensor_info(g->add_output(), "z", onnx::TensorProto::FLOAT, {2, 3});
  testing::add_node(g, "Relu", {"x"}, {"a"}, "relu");
  testing::add_node(g, "Neg", {"a"}, {"b"}, "neg");
  testing::add_node(g, "Exp", {"a"}, {"c"}, "exp");
  testing::add_node(g, "Add", {"b", "c"}, {"y"}, "add");
  testing::add_node(g, "Abs", {"b"}, {"z"}, "abs");
  return model::Model(std::make_unique<onnx::ModelProto>(m));
}

std::vector<TensorMap> one_feed() {
  return {TensorMap{{"x", Tensor::from_vector<float>({2, 3}, {-1.f, 0.5f, 2.f, -3.f, 4.f, 0.f})}}};
}

TEST(GraphCutter, CutTensorsBecomeTypedInputsAndOutputs) {
  const model::Model base = branchy_model();
  const auto values = record_all_values(base, one_feed());
  const GraphCutter cutter(with_observed_types(base, values[0]));
  ASSERT_EQ(cutter.node_count(), 5u);

  const auto neg = cutter.cut({1});
  ASSERT_TRUE(neg);
  EXPECT_EQ(neg->inputs, std::vector<std::string>{"a"});
  EXPECT_EQ(neg->outputs, std::vector<std::string>{"b"});  // used by Add and Abs, both cut away
  const auto& input = neg->model.proto().graph().input(0);
  EXPECT_EQ(input.type().tensor_type().elem_type(), onnx::TensorProto::FLOAT);
  EXPECT_EQ(input.type().tensor_type().shape().dim(1).dim_value(), 3);

  // Relu + Neg: `a` stays an output because Exp (cut away) uses it.
  const auto front = cutter.cut({0, 1});
  ASSERT_TRUE(front);
  EXPECT_EQ(front->inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(front->outputs, (std::vector<std::string>{"a", "b"}));

  // Across the branches, with a model output.
  const auto back = cutter.cut({2, 3, 4});
  ASSERT_TRUE(back);
  EXPECT_EQ(back->inputs, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(back->outputs, (std::vector<std::string>{"y", "z"}));
  EXPECT_FALSE(cutter.cut({}));
  EXPECT_EQ(cutter.ancestors(3), (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_EQ(cutter.ancestors(4), (std::vector<size_t>{0, 1, 4}));
}

TEST(GraphCutter, EveryCutRunsOnRecordedValuesAndReproducesThem) {
  const model::Model base = branchy_model();
  const auto values = record_all_values(base, one_feed());
  const GraphCutter cutter(with_observed_types(base, values[0]));
  for (const NodeSet& nodes : std::vector<NodeSet>{{0}, {1}, {2, 4}, {1, 3}, {0, 1, 2, 3, 4}, {3}}) {
    const auto cut = cutter.cut(nodes);
    ASSERT_TRUE(cut) << format_node_set(nodes);
    EXPECT_NO_THROW(onnx::checker::check_model(cut->model.proto())) << format_node_set(nodes);
    const auto feeds = feeds_for(*cut, values);
    auto session = runtime::Session::create(cut->model.proto()).value();
    const TensorMap outputs = session.run(feeds[0]);
    for (const auto& name : cut->outputs) {
      const Tensor& got = outputs.at(name);
      const Tensor& want = values[0].at(name);
      ASSERT_EQ(got.numel(), want.numel());
      for (int64_t i = 0; i < got.numel(); ++i) EXPECT_EQ(got.data<float>()[i], want.data<float>()[i]) << name;
    }
  }
}

// Polygraphy's boundary: the model's own inputs only; values of cut-away nodes are constants with
// their recorded values, and values a kept node consumes are no outputs.
TEST(GraphCutter, ModelInputsBoundaryFreezesCutValuesAndKeepsOnlyUnconsumedOutputs) {
  const model::Model base = branchy_model();
  const auto values = record_all_values(base, one_feed());
  const GraphCutter cutter(with_observed_types(base, values[0]), CutBoundary::kModelInputs, values[0].clone());

  const auto back = cutter.cut({1, 3, 4});  // Neg, Add, Abs: `a` and `c` come from cut-away nodes
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->inputs.empty());
  EXPECT_EQ(back->frozen, (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(back->outputs, (std::vector<std::string>{"y", "z"}));  // `b` feeds kept nodes only
  EXPECT_EQ(back->model.proto().graph().input_size(), 0);
  EXPECT_EQ(back->model.proto().graph().initializer_size(), 2);

  const auto front = cutter.cut({0, 2, 3});  // Relu, Exp, Add: `b` frozen, `a` consumed by Exp
  ASSERT_TRUE(front);
  EXPECT_EQ(front->inputs, std::vector<std::string>{"x"});
  EXPECT_EQ(front->frozen, std::vector<std::string>{"b"});
  EXPECT_EQ(front->outputs, std::vector<std::string>{"y"});
  for (const Cut* cut : {&*back, &*front}) {
    EXPECT_NO_THROW(onnx::checker::check_model(cut->model.proto()));
    auto session = runtime::Session::create(cut->model.proto()).value();
    const TensorMap outputs = session.run(feeds_for(*cut, values)[0]);
    const Tensor& got = outputs.at("y");
    const Tensor& want = values[0].at("y");
    for (int64_t i = 0; i < got.numel(); ++i) EXPECT_EQ(got.data<float>()[i], want.data<float>()[i]);
  }
}

}  // namespace
}  // namespace parity::tools::debug
