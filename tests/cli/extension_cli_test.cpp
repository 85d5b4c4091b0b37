// Extension modules from the command line: `--extension`, $PARITY_EXTENSION_PATH, extension
// runners in runners/run/bench/test onnx-backend, custom ops in ref and ort, unavailable extensions,
// and `run --gen-script` (the generated programs are built and run by tests/install/gen_script_test.sh).
#include <gtest/gtest.h>

#include <filesystem>

#include "runners/registry.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

std::string extension(const std::string& variant) {
  return std::string(PARITY_TEST_EXTENSION_DIR) + "/" + variant + "/libparity_test_extension.so";
}
std::string custom_op_model() {
  return (source_dir() / "tests" / "data" / "extensions" / "model_with_custom_op.onnx").string();
}
bool contains(const CommandResult& r, const std::string& text) { return r.output.find(text) != std::string::npos; }

TEST(ExtensionCli, RunnersListsTheExtensionRunner) {
  const auto r = run_parity({"--extension", extension("good"), "runners"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "plugin-ref")) << r.output;
  EXPECT_TRUE(contains(r, "available, version 0.1.0")) << r.output;
  EXPECT_TRUE(contains(r, "extension test_extension 0.1.0: " + extension("good"))) << r.output;
}

TEST(ExtensionCli, FoundThroughTheEnvironment) {
  const auto r = run_shell("PARITY_EXTENSION_PATH=/nonexistent:" + std::string(PARITY_TEST_EXTENSION_DIR) +
                           "/good '" + std::string(PARITY_BINARY) + "' runners");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "available, version 0.1.0")) << r.output;
  EXPECT_TRUE(contains(r, "extension file /nonexistent does not exist")) << r.output;
}

TEST(ExtensionCli, RunHelpShowsTheExtensionOptionGroup) {
  const auto r = run_parity({"run", "--help", "--extension", extension("good")});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "Plugin reference runner (--plugin-ref, test extension)")) << r.output;
  EXPECT_TRUE(contains(r, "--plugin-ref-threads")) << r.output;
  EXPECT_TRUE(contains(r, "--extension")) << r.output;
}

TEST(ExtensionCli, CustomOpRunsInRefAndOrt) {
  PARITY_REQUIRE_RUNNER("ort");
  const auto r = run_parity({"run", custom_op_model(), "--ref", "--ort", "--ort-custom-op-library", extension("good"),
                             "--extension", extension("good"), "--val-range", "[-2,2]"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "PASSED | All outputs matched")) << r.output;
}

TEST(ExtensionCli, CustomOpLayerwiseAcrossThePluginOp) {
  PARITY_REQUIRE_RUNNER("ort");
  const auto r = run_parity({"--extension", extension("good"), "run", custom_op_model(), "--ref", "--ort",
                             "--ort-custom-op-library", extension("ort_only"), "--onnx-outputs", "mark", "all"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "x_plus_one")) << r.output;
}

TEST(ExtensionCli, WithoutTheExtensionRefNamesTheMissingKernel) {
  const auto r = run_parity({"run", custom_op_model(), "--ref"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "op 'AddOne' in domain 'test.parity'")) << r.output;
}

TEST(ExtensionCli, ExtensionRunnerInRunBenchAndBackendTests) {
  const auto run = run_parity({"--extension", extension("good"), "run", custom_op_model(), "--ref", "--plugin-ref",
                               "--plugin-ref-threads", "2"});
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(contains(run, "plugin-ref-runner")) << run.output;

  const auto bench = run_parity({"--extension", extension("good"), "bench", custom_op_model(), "--runners",
                                 "ref,plugin-ref", "--threads", "1", "--iterations", "3", "--min-time", "0",
                                 "--warm-up", "1"});
  EXPECT_EQ(bench.exit_code, 0) << bench.output;
  EXPECT_TRUE(contains(bench, "plugin-ref ms")) << bench.output;

  const std::string cases = (onnx_testdata_dir() / "node" / "test_relu").string();
  const auto backend =
      run_parity({"--extension", extension("good"), "test", "onnx-backend", cases, "--runner", "plugin-ref"});
  EXPECT_EQ(backend.exit_code, 0) << backend.output;
  EXPECT_TRUE(contains(backend, "passed")) << backend.output;
}

TEST(ExtensionCli, BrokenExtensionsAreUnavailableNotFatal) {
  for (const auto& [variant, reason] : std::vector<std::pair<std::string, std::string>>{
           {"wrong_abi", "was built for extension ABI 1001; this parity implements ABI 1"},
           {"wrong_signature", "was built with another C++ standard library or other parity headers"},
           {"throwing", "its init failed: the test extension was built to fail at init"}}) {
    const auto list = run_parity({"--extension", extension(variant), "runners"});
    EXPECT_EQ(list.exit_code, 0) << list.output;
    EXPECT_TRUE(contains(list, "unavailable: extension test_extension (" + extension(variant) + "): " + reason) ||
                contains(list, "unavailable: extension test_extension (" + extension(variant) + ") " + reason))
        << list.output;

    const auto asked = run_parity({"--extension", extension(variant), "run", custom_op_model(), "--plugin-ref"});
    EXPECT_EQ(asked.exit_code, 1) << asked.output;
    EXPECT_TRUE(contains(asked, "[E] runner 'plugin-ref' (--plugin-ref) is unavailable: ")) << asked.output;
    EXPECT_TRUE(contains(asked, reason)) << asked.output;

    const auto other = run_parity({"--extension", extension(variant), "run", (source_dir() / "models" / "demo.onnx").string(), "--ref"});
    EXPECT_EQ(other.exit_code, 0) << other.output;
  }
  const auto not_extension = run_parity({"--extension", extension("ort_only"), "runners"});
  EXPECT_EQ(not_extension.exit_code, 0) << not_extension.output;
  EXPECT_TRUE(contains(not_extension, "is not a parity extension (it does not export parity_extension())"))
      << not_extension.output;
}

TEST(ExtensionCli, TheSameRunnerTwiceIsRefusedNotFatal) {
  // A copy of the library under another path declares the same runner: the first one wins.
  TempDir dir;
  const auto copy = dir / "libcopy.so";
  std::filesystem::copy_file(extension("good"), copy);
  const auto r = run_parity({"--extension", extension("good"), "--extension", copy.string(), "run", custom_op_model(),
                             "--plugin-ref"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r, "it cannot be registered: kernel test.parity::AddOne (since 1) is registered already"))
      << r.output;
}

TEST(ExtensionCli, GenScriptWritesAProgramWithoutRunning) {
  TempDir dir;
  const auto r = run_parity({"run", (source_dir() / "models" / "demo.onnx").string(), "--ref", "--ort", "--atol",
                             "1e-4", "--gen-script", (dir / "check.cpp").string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(contains(r, "ref-runner")) << "nothing may run: " << r.output;
  const std::string program = read_file(dir / "check.cpp");
  EXPECT_NE(program.find("make_runner(\"ref\", model, runner_options)"), std::string::npos) << program;
  EXPECT_NE(program.find("tolerances.atol = compare::PerOutput<double>(0.0001);"), std::string::npos) << program;
  const std::string snippet = read_file(dir / "check.cmake");
  EXPECT_NE(snippet.find("add_executable(check"), std::string::npos) << snippet;

  const auto refused = run_parity({"run", (source_dir() / "models" / "demo.onnx").string(), "--ref",
                                   "--onnx-exclude-outputs", "probs", "--gen-script", (dir / "x.cpp").string()});
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_TRUE(contains(refused, "--gen-script needs --onnx-outputs with --onnx-exclude-outputs")) << refused.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "x.cpp"));

  const auto topk = run_parity({"run", (source_dir() / "models" / "demo.onnx").string(), "--ref", "--ort",
                                "--postprocess", "probs:top-3", "--compare", "indices", "--index-tolerance", "1",
                                "--gen-script", (dir / "topk.cpp").string()});
  EXPECT_EQ(topk.exit_code, 0) << topk.output;
  const std::string topk_program = read_file(dir / "topk.cpp");
  EXPECT_NE(topk_program.find("top_k_settings.set(\"probs\", compare::TopK{3, -1});"), std::string::npos) << topk_program;
  EXPECT_NE(topk_program.find("compare::compare_funcs::indices(tolerances)"), std::string::npos) << topk_program;
}

}  // namespace
}  // namespace parity::testing
