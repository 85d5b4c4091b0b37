// End to end: `parity run model.pt --torch` and `parity run model.onnx --ort --load-outputs torch.json`
// compare a TorchScript model with its ONNX export (same PyTorch module, same weights).
#include <gtest/gtest.h>

#include "runners/registry.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

std::string fixture(const std::string& file) { return (source_dir() / "tests" / "data" / "torch" / file).string(); }

struct Pair {
  std::string name;
  std::vector<std::string> data_options;  // same inputs for both runs
  std::vector<std::string> output_names;
};

class TorchOnnxPairs : public ::testing::TestWithParam<Pair> {};

TEST_P(TorchOnnxPairs, TorchScriptMatchesItsOnnxExport) {
  PARITY_REQUIRE_RUNNER("torch");
  PARITY_REQUIRE_RUNNER("ort");
  const Pair& p = GetParam();
  TempDir dir;
  const std::string saved = (dir / "torch.json").string();

  std::vector<std::string> torch_run = {"run", fixture(p.name + ".pt"), "--torch", "--torch-output-names"};
  torch_run.insert(torch_run.end(), p.output_names.begin(), p.output_names.end());
  torch_run.insert(torch_run.end(), p.data_options.begin(), p.data_options.end());
  torch_run.insert(torch_run.end(), {"--save-outputs", saved});
  const auto t = run_parity(torch_run);
  ASSERT_EQ(t.exit_code, 0) << t.output;

  std::vector<std::string> onnx_run = {"run", fixture(p.name + ".onnx")};
  if (runner_available("ref")) onnx_run.push_back("--ref");
  onnx_run.push_back("--ort");
  onnx_run.insert(onnx_run.end(), p.data_options.begin(), p.data_options.end());
  onnx_run.insert(onnx_run.end(), {"--load-outputs", saved});
  const auto o = run_parity(onnx_run);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("torch-runner"), std::string::npos) << o.output;  // the loaded results took part
  EXPECT_EQ(o.output.find("FAILED"), std::string::npos) << o.output;
  EXPECT_NE(o.last_line().find("PASSED"), std::string::npos) << o.output;
}

INSTANTIATE_TEST_SUITE_P(
    PeerRunners, TorchOnnxPairs,
    ::testing::Values(Pair{"conv_relu_linear", {"--input-shapes", "x:[2,3,8,8]"}, {"logits"}},
                      Pair{"two_heads", {"--input-shapes", "x:[2,5]"}, {"doubled_relu", "row_sum"}},
                      Pair{"embedding", {"--input-dtypes", "ids:int64", "--input-shapes", "ids:[2,3]",
                                         "--val-range", "ids:[0,9]"}, {"vectors"}}),
    [](const auto& info) { return info.param.name; });

TEST(TorchRunCli, WithoutInputShapesLibTorchSaysWhy) {
  PARITY_REQUIRE_RUNNER("torch");
  // TorchScript has no input shapes: without --input-shapes the input is a guess LibTorch rejects.
  const auto r = run_parity({"run", fixture("conv_relu_linear.pt"), "--torch"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--input-shapes"), std::string::npos) << r.output;  // the data loader's hint
  EXPECT_NE(r.output.find("[E] LibTorch failed to run"), std::string::npos) << r.output;
  EXPECT_NE(r.last_line().find("FAILED"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace parity::testing
