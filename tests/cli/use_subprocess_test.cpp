// `run --use-subprocess`: runners that segfault, abort or hang FAIL with the reason, while --ref
// beside them still runs, and its outputs and inputs are saved. The failing runners come from a
// test-only extension module (tests/data/extensions/failing_runners.cpp).
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <cstring>
#include <filesystem>

#include "core/formats/polygraphy_json.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

const std::string kModel = (source_dir() / "models" / "demo.onnx").string();

bool contains(const CommandResult& r, const std::string& text) { return r.output.find(text) != std::string::npos; }

TEST(UseSubprocess, CrashingAbortingAndHangingRunnersFailWhileRefIsSaved) {
  TempDir dir;
  const fs::path outputs = dir / "outputs.json";
  const fs::path inputs = dir / "inputs.json";
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r =
      run_with_failing_runners({"run", kModel, "--ref", "--test-segfault", "--test-abort", "--test-hang",
                                "--use-subprocess", "--runner-timeout", "3", "--save-outputs", outputs.string(),
                                "--save-inputs", inputs.string()});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_LT(seconds, 60) << "the hanging runner was not stopped";
  EXPECT_TRUE(contains(r, "FAILED: the runner's process was killed by signal 11 (SEGV: Segmentation fault)")) << r.output;
  EXPECT_TRUE(contains(r, "FAILED: the runner's process was killed by signal 6 (ABRT: Aborted)")) << r.output;
  EXPECT_TRUE(contains(r, "FAILED: the runner did not finish within 3 s (--runner-timeout); killed")) << r.output;
  EXPECT_TRUE(r.last_line().rfind("[E] FAILED", 0) == 0) << r.output;

  // --ref's outputs and the inputs it used were still saved.
  const RunResults saved = read_run_results(outputs.string());
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(saved.runs[0].first.rfind("ref-runner", 0), 0u) << saved.runs[0].first;
  ASSERT_EQ(saved.runs[0].second.size(), 1u);
  EXPECT_EQ(saved.runs[0].second[0].outputs.at("probs").numel(), 10);
  EXPECT_EQ(read_inputs_json(inputs.string()).size(), 1u);
}

TEST(UseSubprocess, TwoHealthyRunnersCompareAsInProcess) {
  TempDir dir;
  const CommandResult isolated =
      run_parity({"run", kModel, "--ref", "--ref", "--use-subprocess", "--save-outputs", (dir / "a.json").string()});
  EXPECT_EQ(isolated.exit_code, 0) << isolated.output;
  EXPECT_TRUE(contains(isolated, "PASSED")) << isolated.output;
  const CommandResult in_process = run_parity({"run", kModel, "--ref", "--ref", "--save-outputs", (dir / "b.json").string()});
  ASSERT_EQ(in_process.exit_code, 0) << in_process.output;
  const RunResults a = read_run_results((dir / "a.json").string());
  const RunResults b = read_run_results((dir / "b.json").string());
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  const Tensor& ta = a.runs[1].second[0].outputs.at("probs");
  const Tensor& tb = b.runs[1].second[0].outputs.at("probs");
  ASSERT_EQ(ta.size_bytes(), tb.size_bytes());
  EXPECT_EQ(std::memcmp(ta.raw_data(), tb.raw_data(), ta.size_bytes()), 0) << "same seed, same outputs";
}

TEST(UseSubprocess, CrashProneRunnersRunInASubprocessByDefault) {
  // --test-crash-prone is registered as opencv is (RunnerInfo::isolate_by_default): with no option
  // its crash is a FAILED verdict, and --ref beside it is still run and saved.
  TempDir dir;
  const fs::path outputs = dir / "outputs.json";
  const CommandResult r =
      run_with_failing_runners({"run", kModel, "--ref", "--test-crash-prone", "--save-outputs", outputs.string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "FAILED: the runner's process was killed by signal 11 (SEGV: Segmentation fault)")) << r.output;
  const RunResults saved = read_run_results(outputs.string());
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(saved.runs[0].first.rfind("ref-runner", 0), 0u) << saved.runs[0].first;

  // --no-subprocess keeps it in parity's process, which the crash then ends.
  const CommandResult in_process = run_with_failing_runners({"run", kModel, "--ref", "--test-crash-prone", "--no-subprocess"});
  EXPECT_EQ(in_process.exit_code, 128 + SIGSEGV) << in_process.output;
  EXPECT_FALSE(contains(in_process, "FAILED")) << in_process.output;
}

TEST(UseSubprocess, TheFailingRunnersExistOnlyWithTheirExtension) {
  const CommandResult plain = run_parity({"runners"});
  EXPECT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_FALSE(contains(plain, "--test-segfault")) << plain.output;
  EXPECT_NE(run_parity({"run", kModel, "--test-segfault"}).exit_code, 0);
  const CommandResult loaded = run_with_failing_runners({"runners"});
  EXPECT_EQ(loaded.exit_code, 0) << loaded.output;
  for (const char* flag : {"--test-segfault", "--test-abort", "--test-hang", "--test-crash-prone"})
    EXPECT_TRUE(contains(loaded, flag)) << flag << "\n" << loaded.output;
}

TEST(UseSubprocess, UseAndNoSubprocessContradict) {
  const CommandResult r = run_parity({"run", kModel, "--ref", "--use-subprocess", "--no-subprocess"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "--use-subprocess and --no-subprocess contradict each other")) << r.output;
}

TEST(UseSubprocess, MemoryLimitIsReported) {
  // 64 MiB of address space cannot even load the runtime: the runner fails, naming the limit.
  const CommandResult r = run_parity({"run", kModel, "--ref", "--use-subprocess", "--runner-memory-limit", "64M"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "memory limit 67108864 bytes, --runner-memory-limit")) << r.output;
}

TEST(UseSubprocess, LimitsWithoutSubprocessAreOneLine) {
  const CommandResult r = run_parity({"run", kModel, "--ref", "--runner-timeout", "5"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r, "--runner-timeout and --runner-memory-limit need --use-subprocess")) << r.output;
  const CommandResult bad = run_parity({"run", kModel, "--ref", "--use-subprocess", "--runner-timeout", "-1"});
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_TRUE(contains(bad, "--runner-timeout '-1' must be a number of seconds above 0")) << bad.output;
}

}  // namespace
}  // namespace parity::testing
