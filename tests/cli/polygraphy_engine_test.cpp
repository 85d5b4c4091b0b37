// The in-line engine runner, Polygraphy's `polygraphy run model.onnx --trt --fp16 --onnxrt` as
// `parity run model.onnx --plan --fp16 --onnxrt`: parity's plan is built with convert's build
// options and compared with ONNX Runtime in one command, saved with --save-engine under any name,
// and a saved plan runs again against the ONNX model it records. On a real model (PaddleOCR's
// PP-OCRv4 detector, fetched by scripts/setup.sh) and the bundled demo model.
#include <gtest/gtest.h>

#include <filesystem>

#include "runtime/plan/plan_file.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

bool contains(const CommandResult& r, const std::string& text) { return r.output.find(text) != std::string::npos; }

std::string det_model() {
  return (source_dir() / ".cache/npm/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx").string();
}
std::string demo_model() { return (source_dir() / "models/demo.onnx").string(); }

// fp16 storage between layers: a relative error of about 2^-11 per layer, accumulated over the
// detector's ~100 convolutions, on a probability map in [0, 1].
const std::vector<std::string> kFp16Tolerances = {"--atol", "1e-2", "--rtol", "1e-2"};
const std::vector<std::string> kDetShapes = {"--input-shapes", "x:[1,3,320,320]"};

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(PolygraphyEngine, InlineFp16PlanAgainstOnnxRuntimeOnPPOCRv4Det) {
  PARITY_REQUIRE_FILE(det_model());
  PARITY_REQUIRE_RUNNER("ort");
  TempDir dir;
  // On random inputs the detector finds no text: its probability map is ~0 everywhere, so the
  // logits before the Sigmoid (|x| ~ 25) are compared as well.
  const std::vector<std::string> outputs = {"--onnx-outputs", "p2o.Add.281", "sigmoid_0.tmp_0"};
  CommandResult r = run_parity(concat(concat(concat({"run", det_model(), "--plan", "--fp16", "--onnxrt"}, kDetShapes),
                                             outputs), kFp16Tolerances));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "Building plan: ")) << r.output;
  EXPECT_TRUE(contains(r, " fp16, ")) << r.output;  // "layers: N fp16, M fp32"
  EXPECT_TRUE(contains(r, "plan-runner-")) << r.output;
  EXPECT_TRUE(contains(r, "PASSED | Output: 'p2o.Add.281' | Difference is within tolerance")) << r.output;
  // Ten times tighter than fp16 allows, the same comparison fails: the plan did compute in fp16.
  r = run_parity(concat(concat({"run", det_model(), "--plan", "--fp16", "--onnxrt"}, kDetShapes), concat(outputs,
                        {"--atol", "1e-3", "--rtol", "1e-3"})));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "FAILED | Output: 'p2o.Add.281'")) << r.output;

  // Built, saved under an .engine name and compared in one command.
  const std::string engine = (dir / "det.engine").string();
  r = run_parity(concat(concat({"run", det_model(), "--plan", "--fp16", "--save-engine", engine, "--onnxrt"},
                               kDetShapes), kFp16Tolerances));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(runtime::plan::is_plan_file(engine));
  // The saved engine runs again: ORT gets the ONNX model the plan records.
  r = run_parity(concat(concat({"run", engine, "--plan", "--onnxrt"}, kDetShapes), kFp16Tolerances));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "the ONNX model plan " + engine + " was built from")) << r.output;
  r = run_parity(concat({"run", engine, "--plan"}, kDetShapes));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = run_parity({"run", engine, "--plan", "--fp16"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "is a plan, built already")) << r.output;
}

TEST(PolygraphyEngine, BuildOptionsOfConvertOnTheInlineRunner) {
  TempDir dir;
  // fp32: the plan computes what the ref runtime computes.
  CommandResult r = run_parity({"run", demo_model(), "--plan", "--pluginref", "--atol", "1e-5", "--rtol", "1e-4"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* precision : {"--fp16", "--bf16"}) {
    r = run_parity({"run", demo_model(), "--plan", precision, "--pluginref", "--atol", "5e-2", "--rtol", "5e-2"});
    EXPECT_EQ(r.exit_code, 0) << precision << "\n" << r.output;
  }
  // int8 calibrates on the data the run feeds, and writes the cache.
  const std::string cache = (dir / "demo.cache").string();
  r = run_parity({"run", demo_model(), "--plan", "--int8", "--calibration-cache", cache, "--iterations", "2",
                  "--pluginref", "--atol", "1", "--rtol", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "over 2 batch(es)")) << r.output;
  EXPECT_TRUE(fs::exists(cache));
  // Tactic files and bad values, as convert takes them.
  const std::string tactics = (dir / "tactics.json").string();
  r = run_parity({"run", demo_model(), "--plan", "--save-tactics", tactics, "--pluginref"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = run_parity({"run", demo_model(), "--plan", "--load-tactics", tactics, "--tactic-sources", "optimized",
                  "reference", "--pluginref"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = run_parity({"run", demo_model(), "--plan", "--layer-precisions", "no_colon", "--pluginref"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "--layer-precisions: 'no_colon' is not NAME:PRECISION")) << r.output;
  // A plan under any name, loaded by --plan and --ref alike.
  const std::string saved = (dir / "demo").string();
  ASSERT_EQ(run_parity({"run", demo_model(), "--plan", "--fp16", "--save-engine", saved}).exit_code, 0);
  r = run_parity({"run", saved, "--plan", "--pluginref", "--atol", "5e-2", "--rtol", "5e-2"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(PolygraphyEngine, PlanWithoutItsSourceModelSaysWhyOrtCannotRun) {
  PARITY_REQUIRE_RUNNER("ort");
  TempDir dir;
  fs::create_directories(dir / "models");
  fs::create_directories(dir / "engines");
  const fs::path model = dir / "models" / "demo.onnx";
  fs::copy_file(demo_model(), model);
  const std::string plan = (dir / "engines" / "demo.plan").string();
  ASSERT_EQ(run_parity({"convert", model.string(), "-o", plan}).exit_code, 0);
  // Recorded relative to the plan: ORT finds the model in another folder.
  CommandResult r = run_parity({"run", plan, "--ref", "--ort", "--atol", "1e-5", "--rtol", "1e-4"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "models/demo.onnx")) << r.output;
  fs::remove(model);
  r = run_parity({"run", plan, "--plan", "--onnxrt"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "--ort reads ONNX models, not parity plans, so it runs the model the plan was built from; "
                          "but the plan '" + plan + "' was built from '../models/demo.onnx', which is not there any more"))
      << r.output;
}

}  // namespace
}  // namespace parity::testing
