// End-to-end: the models torch 2.x's default exporter writes today (../shared/models/modern: BERT
// with Gelu-20, GPT-2; ONNX IR 10, opset 20) run on parity's own runtime and match the outputs
// the real Polygraphy saved with ONNX Runtime, at default tolerances, in float32 and in the fp64
// oracle; and parity's runtime matches the ort runner on fresh inputs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "runners/registry.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kModels = {"bert_tiny_dynamo", "gpt2_tiny_dynamo"};

fs::path modern_dir() { return shared_dir() / "models" / "modern"; }

bool ort_available() {
  const runners::RunnerInfo* ort = runners::RunnerRegistry::instance().find("ort");
  return ort && (!ort->availability || ort->availability(nullptr).is_ok());
}

std::vector<std::string> polygraphy_files(const std::string& model) {
  const fs::path base = modern_dir() / model;
  return {"--load-inputs", base.string() + ".polygraphy_inputs.json", "--load-outputs",
          base.string() + ".polygraphy_outputs.json"};
}

void expect_passed(const std::vector<std::string>& args) {
  const CommandResult r = run_parity(args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.last_line().rfind("[I] PASSED | ", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("Passed: 2/2 iterations"), std::string::npos) << r.output;
}

TEST(ModernModels, RefMatchesPolygraphyOnnxRuntimeOutputs) {
  for (const auto& model : kModels) {
    SCOPED_TRACE(model);
    const fs::path path = modern_dir() / (model + ".onnx");
    ASSERT_TRUE(fs::exists(path)) << path;
    std::vector<std::string> args = {"run", path.string(), "--ref"};
    const auto files = polygraphy_files(model);
    args.insert(args.end(), files.begin(), files.end());
    expect_passed(args);
    args.insert(args.end(), {"--precision", "fp64"});
    expect_passed(args);
  }
}

TEST(ModernModels, RefMatchesOrtRunner) {
  if (!ort_available()) {
    if (std::getenv("CI")) FAIL() << "ONNX Runtime unavailable; run scripts/setup.sh";
    GTEST_SKIP() << "ONNX Runtime unavailable (run scripts/setup.sh)";
  }
  for (const auto& model : kModels) {
    SCOPED_TRACE(model);
    const CommandResult r = run_parity({"run", (modern_dir() / (model + ".onnx")).string(), "--ref", "--ort",
                                        "--val-range", "input_ids:[0,999]", "--iterations", "2"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.last_line().rfind("[I] PASSED | ", 0), 0u) << r.output;
  }
}

}  // namespace
}  // namespace parity::testing
