// Lint's run on loaded input data names the failing node from the runtime's error (Error::node()).
#include "tools/model_lint.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "support/model_builder.h"

namespace parity::tools {
namespace {

using testing::ModelBuilder;

model::Model reshape_model() {
  ModelBuilder m;
  m.input("x", DType::kFloat32, {6});
  m.input("s", DType::kInt64, {1});
  m.node("Relu", {"x"}, {"r"}, "relu1");
  m.node("Reshape", {"r", "s"}, {"y"}, "reshape1");
  m.output("y", DType::kFloat32, {-1});
  return model::load_model_from_bytes(m.model().SerializeAsString()).value();
}

TensorMap feed_with_size(int64_t size) {
  TensorMap feed;
  feed.set("x", Tensor::from_vector<float>({6}, {1, 2, 3, 4, 5, 6}));
  feed.set("s", Tensor::from_vector<int64_t>({1}, {size}));
  return feed;
}

TEST(ModelLint, FailingRunNamesTheNodeTheRuntimeFailedAt) {
  const model::Model model = reshape_model();
  const TensorMap bad = feed_with_size(4);
  const LintReport report = lint_model(model, &bad);
  const LintEntry* runtime_error = nullptr;
  for (const auto& e : report.entries)
    if (e.source == "parity_runtime" && e.level == "exception") runtime_error = &e;
  ASSERT_NE(runtime_error, nullptr) << report.to_json();
  EXPECT_EQ(runtime_error->nodes, std::vector<std::string>({"reshape1"})) << report.to_json();
  EXPECT_EQ(report.failing, std::vector<std::string>({"reshape1"}));
  EXPECT_EQ(report.passing, std::vector<std::string>({"relu1"}));

  const TensorMap good = feed_with_size(6);
  EXPECT_FALSE(lint_model(model, &good).has_errors()) << lint_model(model, &good).to_json();
}

}  // namespace
}  // namespace parity::tools
