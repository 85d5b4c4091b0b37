// End-to-end tests of plan files on the command line: convert -o X.plan, run X.plan --ref,
// inspect model X.plan, and a damaged plan refused with one line.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "runtime/cpu_isa.h"
#include "runtime/reduced_precision.h"
#include "support/test_support.h"

namespace parity {
namespace {

using testing::run_parity;

std::string det_model() {
  return (testing::source_dir() / ".cache/npm/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx").string();
}

TEST(PlanCli, ConvertRunAndCompareWithTheOnnxModelExactly) {
  testing::TempDir tmp;
  const std::string plan = (tmp / "det.plan").string();
  auto r = run_parity({"convert", det_model(), "-o", plan});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Saved plan to: " + plan), std::string::npos) << r.output;
  const std::string onnx_outputs = (tmp / "onnx.json").string();
  r = run_parity({"run", det_model(), "--ref", "--input-shapes", "x:[1,3,96,128]", "--save-outputs", onnx_outputs});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The plan's outputs against the ONNX model's, with zero tolerance: bit for bit.
  r = run_parity({"run", plan, "--ref", "--input-shapes", "x:[1,3,96,128]", "--load-outputs", onnx_outputs, "--atol",
                  "0", "--rtol", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("PASSED | All outputs matched"), std::string::npos) << r.output;
}

TEST(PlanCli, InspectShowsLayersWithTacticsAsTextAndJson) {
  testing::TempDir tmp;
  const std::string plan = (tmp / "det.plan").string();
  ASSERT_EQ(run_parity({"convert", det_model(), "-o", plan}).exit_code, 0);
  auto r = run_parity({"inspect", "model", plan, "--show", "layers"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("==== parity Plan ===="), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tactic optimized:conv_dnnl"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("fused: "), std::string::npos) << r.output;
  r = run_parity({"inspect", "model", plan, "--show", "attrs", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // stdout's JSON, without the PASSED line the run ends with.
  const size_t begin = r.output.find('{'), end = r.output.rfind('}');
  ASSERT_NE(end, std::string::npos) << r.output;
  const auto j = nlohmann::json::parse(r.output.substr(begin, end - begin + 1));
  EXPECT_EQ(j["format"], "parity-plan");
  EXPECT_EQ(j["inputs"][0]["name"], "x");
  EXPECT_GT(j["memory"]["weights_bytes"].get<int64_t>(), 4'000'000);
  EXPECT_EQ(j["num_layers"].get<size_t>(), j["layers"].size());
  bool any_attrs = false;
  for (const auto& layer : j["layers"]) any_attrs = any_attrs || !layer["attributes"].empty();
  EXPECT_TRUE(any_attrs);
}

std::string demo_model() { return (testing::source_dir() / "models/demo.onnx").string(); }

TEST(PlanCli, Fp16PlanRecordsLayerPrecisionsAndPassesAgainstOnnxAtItsTolerance) {
  testing::TempDir tmp;
  const std::string plan = (tmp / "demo16.plan").string();
  auto r = run_parity({"convert", demo_model(), "-o", plan, "--fp16"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(" fp16"), std::string::npos) << r.output;  // "Layers: N fp16, ..."
  r = run_parity({"inspect", "model", plan, "--show", "layers"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("precision fp16"), std::string::npos) << r.output;
  const std::string onnx_outputs = (tmp / "onnx.json").string();
  ASSERT_EQ(run_parity({"run", demo_model(), "--ref", "--save-outputs", onnx_outputs}).exit_code, 0);
  // Not bit-identical to fp32 ...
  r = run_parity({"run", plan, "--ref", "--load-outputs", onnx_outputs, "--atol", "0", "--rtol", "0"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  // ... but within what fp16 storage gives.
  r = run_parity({"run", plan, "--ref", "--load-outputs", onnx_outputs, "--atol", "1e-2", "--rtol", "1e-2"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(PlanCli, Int8PlanCalibratesWritesTheCacheAndReusesIt) {
  testing::TempDir tmp;
  const std::string cache = (tmp / "demo.cache").string();
  const std::string plan1 = (tmp / "a.plan").string(), plan2 = (tmp / "b.plan").string();
  auto r = run_parity({"convert", demo_model(), "-o", plan1, "--int8", "--calibration-cache", cache, "--iterations", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("over 3 batch(es)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Saved calibration cache to: " + cache), std::string::npos) << r.output;
  r = run_parity({"convert", demo_model(), "-o", plan2, "--int8", "--calibration-cache", cache});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("from calibration cache"), std::string::npos) << r.output;
  r = run_parity({"inspect", "model", plan2, "--show", "layers"});
  // The convolutions run on int8 kernels (on a CPU without VNNI, those reading the image in fp32
  // on the quantized values), and the layer view says how beside the tactic.
  const bool native = runtime::native_int8_available();
  EXPECT_NE(r.output.find(std::string("precision int8 ") +
                          (native ? "(s8 x s8 -> s32 -> " : "(fp32 on quantized values) | tactic optimized:conv_dnnl")),
            std::string::npos)
      << r.output;
  if (native) EXPECT_NE(r.output.find(", oneDNN " + runtime::dnnl_isa_name() + ") | tactic optimized:conv_dnnl"), std::string::npos) << r.output;
  r = run_parity({"inspect", "model", plan2, "--show", "layers", "--format", "json"});
  EXPECT_NE(r.output.find(native ? "\"int8_kernel\": true" : "\"int8_kernel\": false"), std::string::npos) << r.output;
  // Both plans quantize with the same scales: identical outputs.
  const std::string out1 = (tmp / "o1.json").string();
  ASSERT_EQ(run_parity({"run", plan1, "--ref", "--save-outputs", out1}).exit_code, 0);
  r = run_parity({"run", plan2, "--ref", "--load-outputs", out1, "--atol", "0", "--rtol", "0"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(PlanCli, BadPrecisionOptionsAreOneLine) {
  testing::TempDir tmp;
  const std::string plan = (tmp / "x.plan").string();
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--layer-precisions", "conv"}, std::vector<std::string>{"--layer-precisions", "a:fp8"},
        std::vector<std::string>{"--precision-constraints", "always"}, std::vector<std::string>{"--fp16", "--bf16"}}) {
    std::vector<std::string> args{"convert", demo_model(), "-o", plan};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_parity(args);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_FALSE(std::filesystem::exists(plan));
  }
  const auto r = run_parity({"convert", demo_model(), "-o", (tmp / "x.onnx").string(), "--fp16"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--fp-to-fp16"), std::string::npos) << r.output;
}

TEST(PlanCli, TimedTacticsTimingCacheReplayAndDiff) {
  testing::TempDir tmp;
  const std::string a = (tmp / "a.plan").string(), b = (tmp / "b.plan").string(), c = (tmp / "c.plan").string();
  const std::string cache = (tmp / "timing.json").string(), tactics = (tmp / "tactics.json").string();
  auto r = run_parity({"convert", demo_model(), "-o", a, "--time-tactics", "--save-timing-cache", cache,
                       "--save-tactics", tactics});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Saved timing cache"), std::string::npos) << r.output;
  r = run_parity({"convert", demo_model(), "-o", b, "--load-timing-cache", cache});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Tactic timing: 0 kernels timed"), std::string::npos) << r.output;
  r = run_parity({"convert", demo_model(), "-o", c, "--load-tactics", tactics});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The replayed plan has the timed plan's tactics: diff-tactics finds nothing only-bad.
  r = run_parity({"inspect", "diff-tactics", "--good", a, "--bad", c});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Could not find potentially bad tactics"), std::string::npos) << r.output;
  // Only the reference family: every layer's tactic is a reference kernel.
  r = run_parity({"convert", demo_model(), "-o", c, "--tactic-sources", "reference"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_parity({"inspect", "model", c, "--show", "layers"});
  EXPECT_EQ(r.output.find("tactic optimized:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tactic reference:"), std::string::npos) << r.output;
  // A tactics file naming a variant a node does not have is one line.
  testing::write_file(tactics, R"({"format": "parity-tactics", "tactics": {"conv1": "optimized:nothing"}})");
  r = run_parity({"convert", demo_model(), "-o", c, "--load-tactics", tactics});
  EXPECT_EQ(r.exit_code, 1) << r.output;
}

TEST(PlanCli, DebugPrecisionAndDebugBuildRunOnTheDemoModel) {
  testing::TempDir tmp;
  auto r = run_parity({"debug", "precision", demo_model(), "--fp16", "--atol", "1e-6", "--rtol", "1e-6"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--precision-constraints obey --layer-precisions"), std::string::npos) << r.output;
  r = run_parity({"debug", "build", demo_model(), "--until", "3", "--artifacts-dir", (tmp / "art").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("parity inspect diff-tactics --dir"), std::string::npos) << r.output;
}

// debug build takes convert's build options, so it varies the tactics of the plan convert builds.
TEST(PlanCli, DebugBuildRebuildsFp16AndInt8Plans) {
  testing::TempDir tmp;
  auto r = run_parity({"debug", "build", demo_model(), "--until", "2", "--fp16", "--atol", "1e-2", "--rtol", "1e-2",
                       "--artifacts-dir", (tmp / "fp16").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("build 1: PASSED"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" fp16"), std::string::npos) << r.output;  // "(layers: N fp16, ...)"
  r = run_parity({"debug", "build", demo_model(), "--until", "2", "--int8", "--atol", "1", "--rtol", "1",
                  "--artifacts-dir", (tmp / "int8").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(" int8"), std::string::npos) << r.output;
  EXPECT_TRUE(std::filesystem::exists(tmp / "int8" / "good" / "build-1.json") ||
              std::filesystem::exists(tmp / "int8" / "bad" / "build-1.json"));
  // Options that make no plan are refused as convert refuses them.
  r = run_parity({"debug", "build", demo_model(), "--precision-constraints", "maybe", "--artifacts-dir",
                  (tmp / "bad").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("--precision-constraints: 'maybe' is not obey, prefer or none"), std::string::npos) << r.output;
}

TEST(PlanCli, DamagedPlanIsOneLineWithARebuildHint) {
  testing::TempDir tmp;
  const std::string plan = (tmp / "det.plan").string();
  ASSERT_EQ(run_parity({"convert", det_model(), "-o", plan}).exit_code, 0);
  std::string bytes = testing::read_file(plan);
  testing::write_file(plan, bytes.substr(0, bytes.size() - 1000));
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"run", plan, "--ref"}, std::vector<std::string>{"inspect", "model", plan}}) {
    const auto r = run_parity(command);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("is truncated"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("rebuild it with `parity convert MODEL -o PLAN`"), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace parity
