#include "runtime/session.h"

#include <gtest/gtest.h>

#include "support/model_builder.h"
#include "runtime/subgraph.h"

namespace parity::runtime {
namespace {

using testing::ModelBuilder;

/// x -> Identity -> a -> Cast(int64) -> b -> Shape -> y ; also a -> Identity -> z
ModelBuilder chain_model() {
  ModelBuilder m;
  m.input("x", DType::kFloat32, {2, -1});
  m.node("Identity", {"x"}, {"a"}, "id1");
  auto& cast = m.node("Cast", {"a"}, {"b"}, "cast1");
  testing::add_int_attr(cast, "to", static_cast<int>(DType::kInt64));
  m.node("Shape", {"b"}, {"y"}, "shape1");
  m.node("Identity", {"a"}, {"z"}, "id2");
  m.output("y", DType::kInt64, {2});
  m.output("z", DType::kFloat32, {2, -1});
  return m;
}

TEST(Session, RunsChainAndReportsMetadata) {
  auto session = Session::create(chain_model().model()).value();
  EXPECT_EQ(session.input_metadata().to_string(), "{x [dtype=float32, shape=(2, 'N')]}");
  EXPECT_EQ(session.output_names(), (std::vector<std::string>{"y", "z"}));
  TensorMap feed{{"x", Tensor::from_vector<float>({2, 3}, {1.5f, 2, 3, 4, 5, -6.5f})}};
  TensorMap out = session.run(feed);
  EXPECT_EQ(out.at("y").to_vector<int64_t>(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(out.at("z").to_vector<float>(), (std::vector<float>{1.5f, 2, 3, 4, 5, -6.5f}));
}

TEST(Session, HookSeesEveryIntermediateInOrder) {
  auto session = Session::create(chain_model().model()).value();
  std::vector<std::string> seen;
  RunOptions opts;
  opts.hook = [&](const std::string& name, const Value& v) {
    ASSERT_TRUE(v.is_tensor());
    seen.push_back(name);
  };
  session.run({{"x", Tensor(DType::kFloat32, {2, 2})}}, opts);
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "y", "z"}));
}

TEST(Session, IntermediatesCanBeRequestedAsOutputs) {
  auto session = Session::create(chain_model().model()).value();
  RunOptions opts;
  opts.outputs = {"b", "a", "y"};
  TensorMap out = session.run({{"x", Tensor::from_vector<float>({2, 1}, {7.9f, -2.2f})}}, opts);
  EXPECT_EQ(out.names(), (std::vector<std::string>{"b", "a", "y"}));
  EXPECT_EQ(out.at("b").to_vector<int64_t>(), (std::vector<int64_t>{7, -2}));
  EXPECT_EQ(session.intermediate_names(), (std::vector<std::string>{"a", "b", "y", "z"}));
}

TEST(Session, IntermediatesAreReleasedAfterTheirLastUse) {
  auto session = Session::create(chain_model().model()).value();
  // 'b' is only used by shape1: the planner must release it right after that node.
  std::vector<std::string> released;
  // Inspect the plan through a planned copy of the same graph.
  PlanEnv env;
  env.opsets[""] = 17;
  auto plan = plan_graph(chain_model().model().graph(), env, nullptr);
  for (const auto& node : plan->nodes_)
    for (int s : node.release) released.push_back(node.spec.name + ":" + plan->slot_names_[s]);
  EXPECT_EQ(released, (std::vector<std::string>{"id1:x", "shape1:b", "id2:a"}));
}

TEST(Session, MissingInputIsAClearError) {
  auto session = Session::create(chain_model().model()).value();
  try {
    session.run({});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("input 'x' is missing"), std::string::npos) << e.what();
  }
}

TEST(Session, WrongDtypeAndShapeAreClearErrors) {
  auto session = Session::create(chain_model().model()).value();
  try {
    session.run({{"x", Tensor(DType::kInt32, {2, 2})}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "input 'x' has dtype int32 but the model expects float32");
  }
  try {
    session.run({{"x", Tensor(DType::kFloat32, {3, 2})}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "input 'x' has shape (3, 2) but the model expects (2, 'N')");
  }
  try {
    session.run({{"x", Tensor(DType::kFloat32, {2, 2})}, {"nope", Tensor(DType::kFloat32, {1})}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'nope', which is not an input"), std::string::npos) << e.what();
  }
}

TEST(Session, UnknownOpNamesOpDomainAndOpset) {
  ModelBuilder m(13);
  m.input("x", DType::kFloat32, {1});
  m.node("NoSuchOp", {"x"}, {"y"}, "mystery");
  m.output("y", DType::kFloat32, {1});
  auto result = Session::create(m.model());
  ASSERT_FALSE(result.is_ok());
  EXPECT_EQ(result.error().code(), ErrorCode::kUnsupported);
  EXPECT_NE(std::string(result.error().what()).find("parity has no kernel for op 'NoSuchOp' in domain 'ai.onnx'"),
            std::string::npos)
      << result.error().what();  EXPECT_EQ(result.error().node(), "mystery");
}

TEST(Session, OpNewerThanModelOpsetListsExistingVersions) {
  // Shape exists since opset 1; CastLike since 15: at opset 13 it must name the versions.
  ModelBuilder m(13);
  m.input("x", DType::kFloat32, {1});
  m.node("CastLike", {"x", "x"}, {"y"}, "cl");
  m.output("y", DType::kFloat32, {1});
  auto result = Session::create(m.model());
  ASSERT_FALSE(result.is_ok());
  EXPECT_NE(std::string(result.error().what())
                .find("no kernel for op 'CastLike' (domain ai.onnx) at opset 13; versions that exist: 15"),
            std::string::npos)
      << result.error().what();
}

TEST(Session, FailureInsideANodeNamesTheNode) {
  ModelBuilder m;
  m.input("s", DType::kInt32, {2});
  m.node("ConstantOfShape", {"s"}, {"y"}, "fill");
  m.output("y", DType::kFloat32, {-1, -1});
  auto session = Session::create(m.model()).value();
  try {
    session.run({{"s", Tensor::from_vector<int32_t>({2}, {1, 2})}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kRuntime);
    EXPECT_NE(std::string(e.what()).find("ConstantOfShape node 'fill'"), std::string::npos) << e.what();
    EXPECT_EQ(e.node(), "fill");
  }
}

TEST(Session, UndefinedValueIsAnInvalidModel) {
  ModelBuilder m;
  m.input("x", DType::kFloat32, {1});
  m.node("Identity", {"ghost"}, {"y"}, "id");
  m.output("y", DType::kFloat32, {1});
  auto result = Session::create(m.model());
  ASSERT_FALSE(result.is_ok());
  EXPECT_EQ(result.error().code(), ErrorCode::kInvalidModel);
  EXPECT_NE(std::string(result.error().what()).find("'ghost'"), std::string::npos);  EXPECT_EQ(result.error().tensor(), "ghost");
}

TEST(Session, Fp64OracleComputesInDoubleAndNarrowsOutputs) {
  ModelBuilder m;
  m.input("x", DType::kFloat32, {2});
  auto& cast = m.node("Cast", {"x"}, {"h"}, "to_half");
  testing::add_int_attr(cast, "to", static_cast<int>(DType::kFloat16));
  m.node("Identity", {"h"}, {"y"});
  m.output("y", DType::kFloat16, {2});
  SessionOptions fp64;
  fp64.precision = Precision::kFloat64;
  auto session = Session::create(m.model(), fp64).value();
  DType seen = DType::kUndefined;
  RunOptions opts;
  opts.hook = [&](const std::string& name, const Value& v) {
    if (name == "h") seen = v.tensor().dtype();
  };
  TensorMap out = session.run({{"x", Tensor::from_vector<float>({2}, {1.0f, 2.0f})}}, opts);
  EXPECT_EQ(seen, DType::kFloat64);  // Cast to float16 stays double inside the oracle
  EXPECT_EQ(out.at("y").dtype(), DType::kFloat16);
  fp64.outputs_in_model_dtype = false;
  auto wide = Session::create(m.model(), fp64).value();
  EXPECT_EQ(wide.run({{"x", Tensor::from_vector<float>({2}, {1.0f, 2.0f})}}).at("y").dtype(), DType::kFloat64);
}

TEST(Session, ThreadsOptionIsValidated) {
  SessionOptions bad;
  bad.threads = 0;
  EXPECT_FALSE(Session::create(chain_model().model(), bad).is_ok());
  SessionOptions four;
  four.threads = 4;
  auto session = Session::create(chain_model().model(), four).value();
  EXPECT_EQ(session.run({{"x", Tensor(DType::kFloat32, {2, 5})}}).at("y").to_vector<int64_t>(),
            (std::vector<int64_t>{2, 5}));
}

TEST(Session, ModelFileErrors) {
  auto missing = Session::create(std::filesystem::path("/nonexistent/model.onnx"));
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace parity::runtime
