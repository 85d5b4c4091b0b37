// End to end: the peer runners inside `parity run`, and a missing ONNX Runtime only failing the
// commands that ask for it.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/formats/polygraphy_json.h"
#include "runners/registry.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

std::string demo_model() { return (source_dir() / "models" / "demo.onnx").string(); }

std::string torch_export() { return (source_dir() / "tests" / "data" / "torch" / "conv_relu_linear.onnx").string(); }

TEST(OrtRunCli, BundledModelPasses) {
  PARITY_REQUIRE_RUNNER("ort");
  std::vector<std::string> args = {"run", demo_model()};
  if (runner_available("ref")) args.push_back("--ref");
  args.insert(args.end(), {"--ort", "--ort-threads", "1", "--ort-opt-level", "basic"});
  const auto r = run_parity(args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ort-runner"), std::string::npos) << r.output;
  EXPECT_NE(r.last_line().find("PASSED"), std::string::npos) << r.output;
}

TEST(OrtRunCli, OrtAndOpenCvAgree) {
  PARITY_REQUIRE_RUNNER("ort");
  PARITY_REQUIRE_RUNNER("opencv");
  const auto r = run_parity({"run", torch_export(), "--ort", "--opencv", "--input-shapes", "x:[2,3,8,8]"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("PASSED | All outputs matched"), std::string::npos) << r.output;
}

TEST(OrtRunCli, OpenCvNamesWhatItCannotImport) {
  PARITY_REQUIRE_RUNNER("opencv");
  // The bundled model's Conv leaves kernel_shape to be inferred from the weights; OpenCV 4.6 needs it.
  // OpenCV runs in a subprocess by default, so the refusal is the runner's FAILED verdict.
  const auto r = run_parity({"run", demo_model(), "--opencv"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("FAILED: OpenCV DNN cannot import"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("first unsupported node is node #0 'conv1', op Conv"), std::string::npos) << r.output;
}

TEST(OrtRunCli, OpenCvFailingBesideOrtStillSavesOrtsOutputs) {
  PARITY_REQUIRE_RUNNER("ort");
  PARITY_REQUIRE_RUNNER("opencv");
  // OpenCV's subprocess (its default) turns its refusal into a verdict: ORT's run is still saved.
  TempDir dir;
  const std::string saved = (dir / "outputs.json").string();
  const auto r = run_parity({"run", demo_model(), "--ort", "--opencv", "--save-outputs", saved});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const RunResults results = read_run_results(saved);
  ASSERT_EQ(results.size(), 1u) << r.output;
  EXPECT_EQ(results.runs[0].first.rfind("ort-runner", 0), 0u) << results.runs[0].first;
  // In parity's own process the refusal ends the command before anything is saved.
  const std::string in_process = (dir / "in_process.json").string();
  EXPECT_EQ(run_parity({"run", demo_model(), "--ort", "--opencv", "--no-subprocess", "--save-outputs", in_process})
                .exit_code,
            1);
  EXPECT_FALSE(std::filesystem::exists(in_process));
}

TEST(OrtRunCli, MissingLibraryFailsOnlyWhenAskedFor) {
  const auto asked = run_parity({"run", demo_model(), "--ort", "--ort-library", "/nonexistent"});
  EXPECT_EQ(asked.exit_code, 1) << asked.output;
  EXPECT_NE(asked.output.find("unavailable: cannot load ONNX Runtime from /nonexistent"), std::string::npos)
      << asked.output;
  EXPECT_NE(asked.last_line().find("FAILED"), std::string::npos) << asked.output;

  const auto list = run_parity({"runners", "--ort-library", "/nonexistent"});
  EXPECT_EQ(list.exit_code, 0) << list.output;

  PARITY_REQUIRE_RUNNER("opencv");
  const auto other =
      run_parity({"run", torch_export(), "--opencv", "--input-shapes", "x:[2,3,8,8]", "--ort-library", "/nonexistent"});
  EXPECT_EQ(other.exit_code, 0) << other.output;
  EXPECT_NE(other.last_line().find("PASSED"), std::string::npos) << other.output;
}

struct DeployModel {
  std::string test_name;
  std::string file;                  // relative to the source tree (npm packages: scripts/setup.sh)
  std::vector<std::string> options;  // input shapes for dynamic dimensions, stated tolerances
};

class OrtRunDeployModels : public ::testing::TestWithParam<DeployModel> {};

// `parity run MODEL --ref --ort` on the models people deploy (without --ref while the ref runner is
// absent from the build).
TEST_P(OrtRunDeployModels, Passes) {
  const DeployModel& m = GetParam();
  const auto path = source_dir() / m.file;
  PARITY_REQUIRE_FILE(path);
  PARITY_REQUIRE_RUNNER("ort");
  std::vector<std::string> args = {"run", path.string()};
  if (runner_available("ref")) args.push_back("--ref");
  args.push_back("--ort");
  args.insert(args.end(), m.options.begin(), m.options.end());
  const auto r = run_parity(args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.last_line().find("PASSED"), std::string::npos) << r.output;
}

INSTANTIATE_TEST_SUITE_P(
    PeerRunners, OrtRunDeployModels,
    ::testing::Values(
        DeployModel{"demo", "models/demo.onnx", {}},
        DeployModel{"ppocr_v4_det", ".cache/npm/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx",
                    {"--input-shapes", "x:[1,3,64,96]", "--atol", "1e-4", "--rtol", "1e-3"}},
        DeployModel{"ppocr_v4_rec", ".cache/npm/ocr-models/assets/ch_PP-OCRv4_rec_infer.onnx",
                    {"--input-shapes", "x:[1,3,48,96]", "--atol", "1e-4", "--rtol", "1e-3"}},
        DeployModel{"ppocr_cls", ".cache/npm/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx",
                    {"--input-shapes", "x:[1,3,48,192]", "--atol", "1e-4", "--rtol", "1e-3"}},
        DeployModel{"openwakeword_hello_deepa", ".cache/npm/openwakeword/models/hello_deepa.onnx", {}},
        DeployModel{"openwakeword_namaste_deepa", ".cache/npm/openwakeword/models/namaste_deepa.onnx", {}}),
    [](const auto& info) { return info.param.test_name; });

TEST(OrtRunCli, BadProviderIsOneLineError) {
  PARITY_REQUIRE_RUNNER("ort");
  const auto r = run_parity({"run", demo_model(), "--ort", "--ort-providers", "nosuchprovider"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("execution provider 'nosuchprovider' is not in this build; available:"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace parity::testing
