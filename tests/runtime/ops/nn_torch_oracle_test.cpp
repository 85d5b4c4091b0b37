// Single-node cases whose expected outputs come from PyTorch in float64 (see
// data/generate_nn_torch_cases.py): an oracle independent of the ONNX reference data, covering
// configurations the ONNX node tests do not (groups + dilation + output_padding, bidirectional
// recurrences with initial states, every GridSample mode/padding, ceil-mode pooling, ...).
#include <gtest/gtest.h>

#include "runtime/ops/backend_node_harness.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

class TorchOracle : public ::testing::TestWithParam<std::string> {};

fs::path case_root() { return source_dir() / "tests" / "runtime" / "ops" / "data" / "nn_torch"; }

TEST_P(TorchOracle, MatchesInFloat32AndFloat64) {
  const fs::path dir = case_root() / GetParam();
  using runtime::KernelTier;
  using runtime::Precision;
  // float32 kernels against float64 PyTorch: absolute slack for values near zero.
  EXPECT_EQ(run_single_node_case(dir, Precision::kFloat32, KernelTier::kReference, 1e-5, 1e-4), "");
  EXPECT_EQ(run_single_node_case(dir, Precision::kFloat32, KernelTier::kOptimized, 1e-5, 1e-4), "") << "optimized tier";
  EXPECT_EQ(run_single_node_case(dir, Precision::kFloat64, KernelTier::kReference, 1e-6, 1e-5), "");
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  if (fs::exists(case_root()))
    for (const auto& e : fs::directory_iterator(case_root()))
      if (e.is_directory()) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Cases, TorchOracle, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(TorchOracleData, IsPresent) { EXPECT_GE(case_names().size(), 40u); }

}  // namespace
}  // namespace parity::testing
