// The node an error arose at, carried by parity::Error rather than only written in its message.
#include <gtest/gtest.h>

#include "runtime/session.h"
#include "support/model_builder.h"

namespace parity::runtime {
namespace {

using testing::ModelBuilder;

Error run_error(const onnx::ModelProto& model, const TensorMap& feed) {
  auto session = Session::create(model);
  if (!session) return session.error();
  try {
    session.value().run(feed);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "the run succeeded";
  return Error(ErrorCode::kInternal, "no error");
}

/// x [6] -> Reshape(x, s) -> y: a shape whose size differs from 6 fails at run time.
ModelBuilder reshape_model(const std::string& node_name) {
  ModelBuilder m;
  m.input("x", DType::kFloat32, {6});
  m.input("s", DType::kInt64, {1});
  m.node("Reshape", {"x", "s"}, {"y"}, node_name);
  m.output("y", DType::kFloat32, {-1});
  return m;
}

TensorMap reshape_feed(int64_t size) {
  TensorMap feed;
  feed.set("x", Tensor::from_vector<float>({6}, {1, 2, 3, 4, 5, 6}));
  feed.set("s", Tensor::from_vector<int64_t>({1}, {size}));
  return feed;
}

TEST(ErrorContext, RunTimeFailureNamesTheNodeOnceInTheMessageAndInTheField) {
  const Error e = run_error(reshape_model("reshape1").model(), reshape_feed(4));
  EXPECT_EQ(e.code(), ErrorCode::kRuntime);
  EXPECT_EQ(e.node(), "reshape1");
  const std::string message = e.what();
  EXPECT_EQ(message.rfind("Reshape node 'reshape1': ", 0), 0u) << message;
  EXPECT_EQ(message.find("Reshape node 'reshape1'", 1), std::string::npos) << message;
}

TEST(ErrorContext, UnnamedNodeIsNamedByItsLabel) {
  const Error e = run_error(reshape_model("").model(), reshape_feed(4));
  EXPECT_EQ(e.node(), "Reshape node (output 'y')");
  const std::string message = e.what();
  EXPECT_EQ(message.rfind("Reshape node (output 'y'): ", 0), 0u) << message;
  EXPECT_EQ(message.find("Reshape node (output 'y')", 1), std::string::npos) << message;
}

TEST(ErrorContext, KernelChecksAtPlanTimeNameTheNodeOnce) {
  // A kernel's own check at plan time (KernelInit::fail): Cast without its required 'to'.
  ModelBuilder no_to;
  no_to.input("x", DType::kFloat32, {2});
  no_to.node("Cast", {"x"}, {"y"}, "cast1");
  no_to.output("y", DType::kFloat32, {2});
  auto bad = Session::create(no_to.model());
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.error().node(), "cast1");
  EXPECT_EQ(std::string(bad.error().what()), "Cast node 'cast1': required attribute 'to' is missing");
}

TEST(ErrorContext, FailureInsideASubgraphNamesTheNodeOfTheMainGraph) {
  // If(cond) { then: Reshape(x, s) } else { Identity(x) }: the Reshape inside fails.
  ModelBuilder then_branch;
  then_branch.node("Reshape", {"x", "s"}, {"r"}, "inner_reshape");
  then_branch.output("r", DType::kFloat32, {-1});
  ModelBuilder else_branch;
  else_branch.node("Identity", {"x"}, {"r2"}, "inner_id");
  else_branch.output("r2", DType::kFloat32, {-1});
  ModelBuilder m;
  m.input("cond", DType::kBool, {});
  m.input("x", DType::kFloat32, {6});
  m.input("s", DType::kInt64, {1});
  auto& if_node = m.node("If", {"cond"}, {"y"}, "branch");
  testing::add_graph_attr(if_node, "then_branch", then_branch.model().graph());
  testing::add_graph_attr(if_node, "else_branch", else_branch.model().graph());
  m.output("y", DType::kFloat32, {-1});
  TensorMap feed = reshape_feed(4);
  feed.set("cond", Tensor::from_vector<bool>({}, {true}));
  const Error e = run_error(m.model(), feed);
  EXPECT_EQ(e.node(), "branch") << e.what();
  const std::string message = e.what();
  EXPECT_EQ(message.rfind("If node 'branch': ", 0), 0u) << message;
  EXPECT_NE(message.find("Reshape node 'inner_reshape': "), std::string::npos) << message;
}

}  // namespace
}  // namespace parity::runtime
