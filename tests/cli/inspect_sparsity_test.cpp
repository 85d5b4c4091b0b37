// `parity inspect sparsity`: hello_deepa's Gemm weights are dense; after `surgeon prune` every one
// follows 2:4 structured sparsity.
#include <gtest/gtest.h>

#include "support/require.h"
#include "support/test_support.h"

namespace parity {
namespace {

using testing::run_parity;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(InspectSparsity, DenseWeightsThenPrunedOnes) {
  const std::string model = (testing::source_dir() / ".cache/npm/openwakeword/models/hello_deepa.onnx").string();
  PARITY_REQUIRE_FILE(model);
  testing::TempDir tmp;
  auto r = run_parity({"inspect", "sparsity", model});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Sparsity | 0 of 3 weight tensor(s)")) << r.output;
  EXPECT_TRUE(contains(r.output, "layer1.weight | axis 1 | dense")) << r.output;
  const std::string pruned = (tmp / "pruned.onnx").string();
  ASSERT_EQ(run_parity({"surgeon", "prune", model, "-o", pruned}).exit_code, 0);
  r = run_parity({"inspect", "sparsity", pruned});
  EXPECT_TRUE(contains(r.output, "Sparsity | 3 of 3 weight tensor(s)")) << r.output;
  EXPECT_TRUE(contains(r.output, "last_layer.weight | axis 1 | 2:4 sparse")) << r.output;
  r = run_parity({"inspect", "sparsity", (tmp / "missing.onnx").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
}

}  // namespace
}  // namespace parity
