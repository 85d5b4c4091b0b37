// debug build (tools/debug_build.h) + diff-tactics (tools/tactic_diff.h): a test-only op whose
// optimized variant is deliberately wrong; the builds that draw it land in bad/, and the tactic
// diff names that variant for that node.
#include "tools/debug_build.h"

#include <gtest/gtest.h>

#include <random>

#include "runtime/kernel.h"
#include "support/model_builder.h"
#include "support/test_support.h"
#include "tools/tactic_diff.h"

namespace parity {
namespace {

/// test.parity.tactics::Double: y = 2x (the reference), and an "optimized" variant that adds 1.
class DoubleKernel : public runtime::Kernel {
 public:
  explicit DoubleKernel(const runtime::KernelInit&, float offset = 0) : offset_(offset) {}
  void compute(runtime::KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.allocate_output(0, DType::kFloat32, x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) y.data<float>()[i] = 2 * x.data<float>()[i] + offset_;
  }

 private:
  float offset_;
};
struct WrongDouble {
  static std::unique_ptr<runtime::Kernel> create(const runtime::KernelInit& init) {
    return std::make_unique<DoubleKernel>(init, 1.0f);
  }
};
PARITY_REGISTER_KERNEL("test.parity.tactics", "Double", 1, DoubleKernel);
PARITY_REGISTER_OPTIMIZED_KERNEL("test.parity.tactics", "Double", 1, WrongDouble);

TEST(DebugBuild, BadBuildsAreTheOnesWithTheWrongVariantAndTheDiffNamesIt) {
  testing::ModelBuilder b;
  auto* opset = const_cast<onnx::ModelProto&>(b.model()).add_opset_import();
  opset->set_domain("test.parity.tactics");
  opset->set_version(1);
  b.input("x", DType::kFloat32, {1, 16}).output("y", DType::kFloat32, {1, 16});
  b.node("Relu", {"x"}, {"r"}, "relu");
  b.node("Double", {"r"}, {"d"}, "double").set_domain("test.parity.tactics");
  b.node("Sigmoid", {"d"}, {"y"}, "sig");
  Tensor x(DType::kFloat32, {1, 16});
  std::mt19937 gen(4);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& v : x.values<float>()) v = dist(gen);

  testing::TempDir dir;
  tools::DebugBuildOptions options;
  options.builds = 12;
  options.artifacts = dir.path();
  const auto result = tools::debug_build(b.model(), "", {TensorMap{{"x", x}}}, options);
  EXPECT_EQ(result.good + result.bad, 12);
  ASSERT_GT(result.bad, 0);
  ASSERT_GT(result.good, 0);
  std::vector<tools::BuildTactics> good, bad;
  for (const auto& e : std::filesystem::directory_iterator(dir / "good")) good.push_back(tools::read_build_tactics(e.path()));
  for (const auto& e : std::filesystem::directory_iterator(dir / "bad")) bad.push_back(tools::read_build_tactics(e.path()));
  for (const auto& build : bad) EXPECT_EQ(build.at("double"), "optimized:debug_build_test");
  for (const auto& build : good) EXPECT_EQ(build.at("double"), "reference:debug_build_test");
  const auto suspicious = tools::suspicious_tactics(good, bad);
  ASSERT_TRUE(suspicious.count("double"));
  EXPECT_EQ(suspicious.at("double"), std::set<std::string>{"optimized:debug_build_test"});
}

}  // namespace
}  // namespace parity
