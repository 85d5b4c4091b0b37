// Plans on the command line, continued: optimization profiles (convert --profile / --trt-*-shapes,
// inspect, run inside and outside them, --profile-index) and the external --check of
// `debug precision` and `debug build`.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "support/model_builder.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity {
namespace {

using testing::run_parity;

std::string rec_model() {
  return (testing::source_dir() / ".cache/npm/ocr-models/assets/ch_PP-OCRv4_rec_infer.onnx").string();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(PlanProfilesCli, RecPlanWithTwoProfilesInspectRunAndRefuseOutside) {
  PARITY_REQUIRE_FILE(rec_model());
  testing::TempDir tmp;
  const std::string plan = (tmp / "rec.plan").string();
  auto r = run_parity({"convert", rec_model(), "-o", plan, "--profile", "x:[1,3,48,64],[1,3,48,160],[1,3,48,320]",
                       "x:[1,3,48,320],[1,3,48,480],[1,3,48,640]"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_parity({"inspect", "model", plan});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "---- 2 Profile(s) ----")) << r.output;
  EXPECT_TRUE(contains(r.output, "profile 0: x [1,3,48,64]..[1,3,48,320] (opt [1,3,48,160]); activations at max "))
      << r.output;
  EXPECT_TRUE(contains(r.output, "profile 1: x [1,3,48,320]..[1,3,48,640] (opt [1,3,48,480]); activations at max "))
      << r.output;

  // Inside a profile: the plan's outputs equal the ONNX model's bit for bit.
  const std::string golden = (tmp / "golden.json").string();
  ASSERT_EQ(run_parity({"run", rec_model(), "--ref", "--input-shapes", "x:[1,3,48,400]", "--save-outputs", golden}).exit_code, 0);
  r = run_parity({"run", plan, "--ref", "--input-shapes", "x:[1,3,48,400]", "--load-outputs", golden, "--atol", "0",
                  "--rtol", "0"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // --profile-index 0 does not cover width 400.
  r = run_parity({"run", plan, "--ref", "--profile-index", "0", "--input-shapes", "x:[1,3,48,400]"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "input 'x' has shape [1,3,48,400], outside the selected profile 0")) << r.output;
  // bench --profile times a plan node by node too (no ONNX graph to describe the nodes with).
  r = run_parity({"bench", plan, "--runners", "ref", "--input-shapes", "x:[1,3,48,400]", "--iterations", "2",
                  "--min-time", "0", "--warm-up", "1", "--profile"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "ref per operator type")) << r.output;
  // Outside every profile: one line naming the input, the shape and the profiles.
  r = run_parity({"run", plan, "--ref", "--input-shapes", "x:[1,3,48,800]"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "input 'x' has shape [1,3,48,800], outside every profile of the plan (profile 0: x "
                                 "[1,3,48,64]..[1,3,48,320]"))
      << r.output;
}

TEST(PlanProfilesCli, PolygraphySpellingAndBadProfilesAreOneLine) {
  PARITY_REQUIRE_FILE(rec_model());
  testing::TempDir tmp;
  const std::string plan = (tmp / "rec.plan").string();
  auto r = run_parity({"convert", rec_model(), "-o", plan, "--trt-min-shapes", "x:[1,3,48,32]", "--trt-opt-shapes",
                       "x:[1,3,48,64]", "--trt-max-shapes", "x:[2,3,48,96]"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_parity({"inspect", "model", plan});
  EXPECT_TRUE(contains(r.output, "profile 0: x [1,3,48,32]..[2,3,48,96] (opt [1,3,48,64])")) << r.output;
  const std::string bad = (tmp / "bad.plan").string();
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--profile", "y:[1,3,48,64]"}, std::vector<std::string>{"--profile", "x:[1,3,48,64],[1,3,48,32],[1,3,48,96]"},
        std::vector<std::string>{"--profile", "x:[1,4,48,64]"},
        std::vector<std::string>{"--trt-min-shapes", "x:[1,3,48,32]", "--trt-max-shapes", "x:[1,3,48,96]"}}) {
    std::vector<std::string> args{"convert", rec_model(), "-o", bad};
    args.insert(args.end(), extra.begin(), extra.end());
    r = run_parity(args);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_FALSE(std::filesystem::exists(bad));
  }
}

using testing::random_tensor;

/// x -> Relu "relu" -> Mul(100000) "amplify" -> y1 (beyond float16's 65504); relu -> MatMul "mm" -> y2.
std::string write_overflow_model(const std::filesystem::path& dir) {
  testing::ModelBuilder b;
  b.input("x", DType::kFloat32, {2, 8}).output("y1", DType::kFloat32, {2, 8}).output("y2", DType::kFloat32, {2, 4});
  b.initializer("W", random_tensor({8, 4}, 3));
  b.initializer("big", Tensor::from_vector<float>({1}, {100000.0f}));
  b.node("Relu", {"x"}, {"r"}, "relu");
  b.node("Mul", {"r", "big"}, {"y1"}, "amplify");
  b.node("MatMul", {"r", "W"}, {"y2"}, "mm");
  const auto path = dir / "overflow.onnx";
  std::ofstream out(path, std::ios::binary);
  b.model().SerializeToOstream(&out);
  return path.string();
}

TEST(PlanCheckCli, DebugPrecisionWithAnExternalCheckFindsTheOverflowingLayer) {
  testing::TempDir tmp;
  const std::string model = write_overflow_model(tmp.path());
  const std::string golden = (tmp / "golden.json").string();
  ASSERT_EQ(run_parity({"run", model, "--ref", "--save-outputs", golden}).exit_code, 0);
  const std::string artifact = (tmp / "candidate.plan").string();
  auto r = run_parity({"debug", "precision", model, "--fp16", "--iter-artifact", artifact, "--check", PARITY_BINARY,
                       "run", "{plan}", "--ref", "--load-outputs", golden, "--atol", "1e-2", "--rtol", "1e-2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "judged by --check")) << r.output;
  EXPECT_TRUE(contains(r.output, "Layers that must run in fp32 (1,")) << r.output;
  EXPECT_TRUE(contains(r.output, "--layer-precisions amplify:fp32")) << r.output;
  EXPECT_TRUE(std::filesystem::exists(artifact));
  // --fail-regex: a failing status that does not print the pattern does not count, so the fp16 plan passes.
  r = run_parity({"debug", "precision", model, "--fp16", "--iter-artifact", artifact, "--fail-regex", "no such text",
                  "--check", PARITY_BINARY, "run", "{plan}", "--ref", "--load-outputs", golden});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "passes with every layer in fp16")) << r.output;
  // A check command that does not exist is one line before any build.
  r = run_parity({"debug", "precision", model, "--check", "no-such-command-xyz", "{plan}"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "command 'no-such-command-xyz' not found")) << r.output;
}

TEST(PlanCheckCli, DebugBuildSortsBuildsByTheExternalCheck) {
  testing::TempDir tmp;
  const std::string model = write_overflow_model(tmp.path());
  const std::string golden = (tmp / "golden.json").string();
  ASSERT_EQ(run_parity({"run", model, "--ref", "--save-outputs", golden}).exit_code, 0);
  auto r = run_parity({"debug", "build", model, "--until", "2", "--artifacts-dir", (tmp / "a").string(), "--iter-artifact",
                       (tmp / "c.plan").string(), "--check", PARITY_BINARY, "run", "{plan}", "--ref", "--load-outputs",
                       golden, "--atol", "1e-4", "--rtol", "1e-4"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "2 good and 0 bad build(s)")) << r.output;
  // The check's exit status decides: `false` fails every build, and --fail-code 2 makes exit 1 a pass.
  r = run_parity({"debug", "build", model, "--until", "2", "--artifacts-dir", (tmp / "b").string(), "--iter-artifact",
                  (tmp / "c.plan").string(), "--check", "false", "{plan}"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "0 good and 2 bad build(s)")) << r.output;
  r = run_parity({"debug", "build", model, "--until", "1", "--artifacts-dir", (tmp / "b").string(), "--iter-artifact",
                  (tmp / "c.plan").string(), "--fail-code", "2", "--check", "false", "{plan}"});
  EXPECT_TRUE(contains(r.output, "1 good and 0 bad build(s)")) << r.output;
}

}  // namespace
}  // namespace parity
