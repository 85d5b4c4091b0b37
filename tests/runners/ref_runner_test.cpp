#include "runners/ref/ref_runner.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/model_builder.h"
#include "runners/registry.h"
#include "support/test_support.h"

namespace parity {
namespace {

std::string write_identity_model(const testing::TempDir& dir) {
  testing::ModelBuilder m;
  m.input("x", DType::kFloat32, {1, 3});
  m.node("Identity", {"x"}, {"y"}, "id");
  m.output("y", DType::kFloat32, {1, 3});
  const std::string path = (dir / "model.onnx").string();
  std::ofstream out(path, std::ios::binary);
  m.model().SerializeToOstream(&out);
  return path;
}

TEST(RefRunner, RegisteredAndRunsThroughRunnerApi) {
  const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find("ref");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->flag, "--ref");
  testing::TempDir dir;
  auto runner = info->create(runners::RunnerConfig{write_identity_model(dir)});
  EXPECT_EQ(runner->name().rfind("ref-runner-N", 0), 0u) << runner->name();
  runners::ActiveRunner active(*runner);
  EXPECT_EQ(runner->input_metadata().to_string(), "{x [dtype=float32, shape=(1, 3)]}");
  TensorMap out = runner->infer({{"x", Tensor::from_vector<float>({1, 3}, {1, 2, 3})}});
  EXPECT_EQ(out.at("y").to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_GE(runner->last_inference_time(), 0.0);
  EXPECT_THROW(runner->infer({{"x", Tensor(DType::kFloat32, {2, 3})}}), Error);
}

TEST(RefRunner, OptionGroupParsesThreadsAndPrecision) {
  const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find("ref");
  ASSERT_NE(info, nullptr);
  const runners::RunnerOptions options = info->parse_options({"--threads", "3", "--precision", "fp64"});
  testing::TempDir dir;
  auto runner = info->create(runners::RunnerConfig{write_identity_model(dir), options});
  runners::ActiveRunner active(*runner);
  auto& ref = dynamic_cast<runners::RefRunner&>(*runner);
  EXPECT_EQ(ref.session().options().threads, 3);
  EXPECT_EQ(ref.session().options().precision, runtime::Precision::kFloat64);
  // Outputs come back in the model's dtype.
  EXPECT_EQ(runner->infer({{"x", Tensor(DType::kFloat32, {1, 3})}}).at("y").dtype(), DType::kFloat32);
  EXPECT_THROW(info->parse_options({"--precision", "fp16"}), Error);
  EXPECT_THROW(info->parse_options({"--threads", "0"}), Error);
  EXPECT_THROW(info->parse_options({"--ort-threads", "2"}), Error);  // not ref's
}

}  // namespace
}  // namespace parity
