// Nested graphs (If/Loop/Scan with outer-scope values), sequences and optionals through Session.
#include <gtest/gtest.h>

#include "support/model_builder.h"
#include "runtime/session.h"

namespace parity::runtime {
namespace {

using testing::ModelBuilder;

onnx::GraphProto identity_branch(const std::string& graph_name, const std::string& outer, const std::string& out) {
  onnx::GraphProto g;
  g.set_name(graph_name);
  auto* n = g.add_node();
  n->set_op_type("Identity");
  n->add_input(outer);  // an outer-scope value
  n->add_output(out);
  ModelBuilder::set_tensor_type(g.add_output(), out, DType::kFloat32, {-1});
  return g;
}

TEST(ControlFlow, IfPicksBranchAndReadsOuterScope) {
  ModelBuilder m;
  m.input("cond", DType::kBool, {});
  m.input("a", DType::kFloat32, {2});
  m.input("b", DType::kFloat32, {2});
  auto& node = m.node("If", {"cond"}, {"y"}, "choose");
  testing::add_graph_attr(node, "then_branch", identity_branch("then", "a", "t_out"));
  testing::add_graph_attr(node, "else_branch", identity_branch("else", "b", "e_out"));
  m.output("y", DType::kFloat32, {2});
  auto session = Session::create(m.model()).value();
  TensorMap feed{{"cond", Tensor::scalar<bool>(true)},
                 {"a", Tensor::from_vector<float>({2}, {1, 2})},
                 {"b", Tensor::from_vector<float>({2}, {3, 4})}};
  EXPECT_EQ(session.run(feed).at("y").to_vector<float>(), (std::vector<float>{1, 2}));
  feed.set("cond", Tensor::scalar<bool>(false));
  EXPECT_EQ(session.run(feed).at("y").to_vector<float>(), (std::vector<float>{3, 4}));
}

TEST(ControlFlow, LoopCarriesValuesAndStacksScanOutputs) {
  // body(i, cond, acc): out_acc = Identity(x_outer) chained through a sequence insert; scan = i.
  onnx::GraphProto body;
  body.set_name("body");
  ModelBuilder::set_tensor_type(body.add_input(), "i", DType::kInt64, {});
  ModelBuilder::set_tensor_type(body.add_input(), "c", DType::kBool, {});
  auto* seq_in = body.add_input();
  seq_in->set_name("seq");
  seq_in->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
  auto add = [&](const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs) {
    auto* n = body.add_node();
    n->set_op_type(op);
    for (auto& i : ins) n->add_input(i);
    for (auto& o : outs) n->add_output(o);
  };
  add("Identity", {"c"}, {"c_out"});
  add("SequenceInsert", {"seq", "x"}, {"seq_out"});  // x is from the outer scope
  add("Identity", {"i"}, {"i_out"});
  ModelBuilder::set_tensor_type(body.add_output(), "c_out", DType::kBool, {});
  auto* seq_out = body.add_output();
  seq_out->set_name("seq_out");
  *seq_out->mutable_type() = seq_in->type();
  ModelBuilder::set_tensor_type(body.add_output(), "i_out", DType::kInt64, {});

  ModelBuilder m;
  m.input("trips", DType::kInt64, {});
  m.input("x", DType::kFloat32, {1});
  m.node("SequenceEmpty", {}, {"empty"}, "empty");
  auto& loop = m.node("Loop", {"trips", "", "empty"}, {"seq_final", "iters"}, "loop");
  testing::add_graph_attr(loop, "body", body);
  m.node("ConcatFromSequence", {"seq_final"}, {"y"}, "concat").add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(0);
    return a;
  }());
  m.output("y", DType::kFloat32, {-1});
  m.output("iters", DType::kInt64, {-1});
  auto session = Session::create(m.model()).value();
  TensorMap out = session.run({{"trips", Tensor::scalar<int64_t>(3)}, {"x", Tensor::from_vector<float>({1}, {2.5f})}});
  EXPECT_EQ(out.at("y").to_vector<float>(), (std::vector<float>{2.5f, 2.5f, 2.5f}));
  EXPECT_EQ(out.at("iters").to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2}));
  // The loop's sequence output comes back through run_values as a sequence.
  RunOptions opts;
  opts.outputs = {"seq_final"};
  auto values = session.run_values({{"trips", Value(Tensor::scalar<int64_t>(2))},
                                    {"x", Value(Tensor::from_vector<float>({1}, {1.0f}))}},
                                   opts);
  ASSERT_TRUE(values[0].second.is_sequence());
  EXPECT_EQ(values[0].second.sequence_items().size(), 2u);
  // A sequence output through run() is a clear error.
  EXPECT_THROW(session.run({{"trips", Tensor::scalar<int64_t>(1)}, {"x", Tensor(DType::kFloat32, {1})}}, opts), Error);
}

TEST(ControlFlow, ScanReversesInputAndOutput) {
  // body(state, x_t) -> (state, x_t): the scan output with direction 1 undoes the input reversal.
  onnx::GraphProto body;
  body.set_name("scan_body");
  ModelBuilder::set_tensor_type(body.add_input(), "s", DType::kFloat32, {1});
  ModelBuilder::set_tensor_type(body.add_input(), "xt", DType::kFloat32, {1});
  for (auto [in, out] : {std::pair<const char*, const char*>{"s", "s_out"}, {"xt", "y_t"}}) {
    auto* n = body.add_node();
    n->set_op_type("Identity");
    n->add_input(in);
    n->add_output(out);
  }
  ModelBuilder::set_tensor_type(body.add_output(), "s_out", DType::kFloat32, {1});
  ModelBuilder::set_tensor_type(body.add_output(), "y_t", DType::kFloat32, {1});
  ModelBuilder m;
  m.input("s0", DType::kFloat32, {1});
  m.input("x", DType::kFloat32, {3, 1});
  auto& scan = m.node("Scan", {"s0", "x"}, {"s_final", "ys"}, "scan");
  testing::add_graph_attr(scan, "body", body);
  testing::add_int_attr(scan, "num_scan_inputs", 1);
  auto* dirs = scan.add_attribute();
  dirs->set_name("scan_input_directions");
  dirs->set_type(onnx::AttributeProto::INTS);
  dirs->add_ints(1);
  m.output("s_final", DType::kFloat32, {1});
  m.output("ys", DType::kFloat32, {3, 1});
  auto session = Session::create(m.model()).value();
  TensorMap out = session.run({{"s0", Tensor::from_vector<float>({1}, {9})},
                               {"x", Tensor::from_vector<float>({3, 1}, {1, 2, 3})}});
  EXPECT_EQ(out.at("ys").to_vector<float>(), (std::vector<float>{3, 2, 1}));
  EXPECT_EQ(out.at("s_final").to_vector<float>(), (std::vector<float>{9}));
}

TEST(ControlFlow, OptionalOps) {
  ModelBuilder m(16);
  m.input("x", DType::kFloat32, {2});
  m.node("Optional", {"x"}, {"opt"}, "wrap");
  m.node("OptionalHasElement", {"opt"}, {"has"}, "has");
  m.node("OptionalGetElement", {"opt"}, {"y"}, "get");
  auto& none = m.node("Optional", {}, {"none"}, "none");
  auto* type = none.add_attribute();
  type->set_name("type");
  type->set_type(onnx::AttributeProto::TYPE_PROTO);
  type->mutable_tp()->mutable_tensor_type()->set_elem_type(1);
  m.node("OptionalHasElement", {"none"}, {"has_none"}, "has_none");
  m.output("has", DType::kBool, {});
  m.output("has_none", DType::kBool, {});
  m.output("y", DType::kFloat32, {2});
  auto session = Session::create(m.model()).value();
  TensorMap out = session.run({{"x", Tensor::from_vector<float>({2}, {1, 2})}});
  EXPECT_TRUE(out.at("has").to_vector<bool>()[0]);
  EXPECT_FALSE(out.at("has_none").to_vector<bool>()[0]);
  EXPECT_EQ(out.at("y").to_vector<float>(), (std::vector<float>{1, 2}));
}

}  // namespace
}  // namespace parity::runtime
