// Tactic choice at build time (runtime/tactics.h): timing keeps a variant that accepts the node
// and fills the timing cache, which a second build reuses; replay forces the recorded tactic and
// refuses one the node does not have; forbidden families leave the reference kernel.
#include "support/test_support.h"
#include "runtime/tactics.h"

#include <gtest/gtest.h>

#include <random>

#include "support/model_builder.h"
#include "runtime/session.h"
#include "runtime/subgraph.h"

namespace parity {
namespace {

using runtime::Session;

using testing::random_tensor;

/// x[1,4,8,8] -> Conv "c" -> Softmax "sm" -> y
onnx::ModelProto model() {
  testing::ModelBuilder b;
  b.input("x", DType::kFloat32, {1, 4, 8, 8}).output("y", DType::kFloat32, {1, 8, 8, 8});
  b.initializer("w", random_tensor({8, 4, 1, 1}, 1));
  b.node("Conv", {"x", "w"}, {"h"}, "c");
  b.node("Softmax", {"h"}, {"y"}, "sm");
  return b.model();
}

std::map<std::string, std::string> tactics_of(const Session& s) {
  std::map<std::string, std::string> t;
  for (const auto& n : s.plan().nodes_) t[n.kernel_spec.name] = n.tactic;
  return t;
}

TEST(Tactics, TimingChoosesAmongAcceptingVariantsAndFillsTheCache) {
  runtime::SessionOptions options;
  options.kernel_options.isa_cap = testing::test_kernel_isa();
  options.tactics.time = true;
  options.tactics.cache = std::make_shared<runtime::TimingCache>();
  Session timed = Session::create(model(), options).value();
  const auto chosen = tactics_of(timed);
  for (const char* node : {"c", "sm"}) {
    const std::string t = chosen.at(node);
    EXPECT_TRUE(t.rfind("optimized:", 0) == 0 || t.rfind("reference:", 0) == 0) << t;
  }
  EXPECT_EQ(options.tactics.cache->size(), 4u);  // two variants of each node
  const Tensor x = random_tensor({1, 4, 8, 8}, 2);
  const Tensor fp32 = Session::create(model()).value().run({{"x", x}}).at("y");
  const Tensor got = timed.run({{"x", x}}).at("y");
  for (int64_t i = 0; i < got.numel(); ++i) EXPECT_NEAR(got.data<float>()[i], fp32.data<float>()[i], 1e-5);

  // A second build answers every lookup from the cache (JSON round trip) and chooses the same.
  auto reloaded = std::make_shared<runtime::TimingCache>(
      runtime::TimingCache::from_json(options.tactics.cache->to_json(), "the cache"));
  options.tactics.cache = reloaded;
  EXPECT_EQ(tactics_of(Session::create(model(), options).value()), chosen);
  EXPECT_EQ(reloaded->misses(), 0u);
  EXPECT_EQ(reloaded->hits(), 4u);
}

TEST(Tactics, ReplayForcesTheRecordedTacticAndRefusesOthers) {
  runtime::SessionOptions options;
  options.kernel_options.isa_cap = testing::test_kernel_isa();
  options.tactics.replay = {{"c", "reference:conv"}, {"sm", "optimized:softmax_dnnl"}};
  auto t = tactics_of(Session::create(model(), options).value());
  EXPECT_EQ(t.at("c"), "reference:conv");
  EXPECT_EQ(t.at("sm"), "optimized:softmax_dnnl");
  // Round trip through the file format.
  EXPECT_EQ(runtime::tactics_from_json(runtime::tactics_to_json(options.tactics.replay), "f"), options.tactics.replay);
  options.tactics.replay = {{"c", "optimized:gemm_magic"}};
  auto refused = Session::create(model(), options);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(std::string(refused.error().what()).find("tactic 'optimized:gemm_magic', which is not one of its tactics"),
            std::string::npos)
      << refused.error().what();
  EXPECT_THROW(runtime::tactics_from_json("{\"tactics\": 3}", "f"), Error);
  EXPECT_THROW(runtime::TimingCache::from_json("[]", "c"), Error);
}

TEST(Tactics, ForbiddenFamiliesLeaveTheReferenceKernel) {
  runtime::SessionOptions options;
  options.kernel_options.isa_cap = testing::test_kernel_isa();
  options.tactics.forbidden = {"optimized"};
  for (const auto& [node, tactic] : tactics_of(Session::create(model(), options).value()))
    EXPECT_EQ(tactic.rfind("reference:", 0), 0u) << node << " " << tactic;
}

}  // namespace
}  // namespace parity
