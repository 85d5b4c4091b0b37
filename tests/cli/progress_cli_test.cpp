// Progress lines appear on a terminal (a pseudo-terminal from `script`) and never in pipes, and -q
// and --silent turn them off.
#include <gtest/gtest.h>

#include <cstdlib>

#include "support/test_support.h"

namespace parity::testing {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Runs parity under a pseudo-terminal: its stdout and stderr are the terminal `script` records.
CommandResult run_in_terminal(const std::string& args) {
  const std::string inner = std::string(PARITY_BINARY) + " " + args;
  return run_shell("script -qec '" + inner + "' /dev/null");
}

std::string conformance_args() {
  return "test onnx-backend " + (onnx_testdata_dir() / "node").string() + " --filter test_add";
}

TEST(ProgressCli, ConformanceProgressOnTerminalOnly) {
  const CommandResult tty = run_in_terminal(conformance_args());
  ASSERT_EQ(tty.exit_code, 0) << tty.output;
  EXPECT_TRUE(contains(tty.output, "\r\033[KConformance (ref): ")) << tty.output;
  EXPECT_TRUE(contains(tty.output, "(100%)")) << tty.output;
  EXPECT_TRUE(contains(tty.output, "Summary: ")) << tty.output;

  const CommandResult piped = run_shell(std::string(PARITY_BINARY) + " " + conformance_args() + " 2>&1 | cat");
  ASSERT_EQ(piped.exit_code, 0) << piped.output;
  EXPECT_TRUE(contains(piped.output, "Summary: ")) << piped.output;
  EXPECT_FALSE(contains(piped.output, "Conformance (ref):")) << piped.output;
  EXPECT_FALSE(contains(piped.output, "\033[K")) << piped.output;

  // Only stdout on the terminal, stderr to a file: the file stays clean.
  TempDir tmp;
  const CommandResult to_file = run_in_terminal(conformance_args() + " 2>" + (tmp / "err.txt").string());
  EXPECT_FALSE(contains(read_file(tmp / "err.txt"), "Conformance (ref):"));
  EXPECT_FALSE(contains(to_file.output, "Conformance (ref):")) << to_file.output;
}

TEST(ProgressCli, QuietAndSilentTurnItOff) {
  for (const char* flag : {"-q", "--silent"}) {
    const CommandResult r = run_in_terminal(conformance_args() + " " + flag);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_FALSE(contains(r.output, "Conformance (ref):")) << flag << "\n" << r.output;
  }
}

TEST(ProgressCli, RunIterationsMarkAllWindowsAndBench) {
  const std::string demo = (source_dir() / "models/demo.onnx").string();
  const CommandResult run = run_in_terminal("run " + demo + " --ref --iterations 3");
  EXPECT_TRUE(contains(run.output, "inference: 3/3 (100%)")) << run.output;
  // mark all windows (each a run of the peer): ONNX Runtime is the peer; setup.sh fetches it.
  const CommandResult mark = run_in_terminal("run " + demo + " --ref --ort --onnx-outputs mark all --mark-all-window-mb 1");
  if (contains(mark.output, "is unavailable")) {
    const char* ci = std::getenv("CI");
    if (ci && std::string(ci) == "true") FAIL() << mark.output;
  } else {
    EXPECT_TRUE(contains(mark.output, "mark all windows: ")) << mark.output;
    EXPECT_TRUE(contains(mark.output, "(100%)")) << mark.output;
  }
  const CommandResult bench =
      run_in_terminal("bench " + demo + " --runners ref --threads 1,2 --iterations 2 --min-time 0 --warm-up 1");
  EXPECT_TRUE(contains(bench.output, "bench rows: 2/2 (100%)")) << bench.output;
  // The same commands piped: no progress.
  const CommandResult piped = run_shell(std::string(PARITY_BINARY) + " run " + demo + " --ref --iterations 3 2>&1 | cat");
  EXPECT_FALSE(contains(piped.output, "inference: ")) << piped.output;
}

}  // namespace
}  // namespace parity::testing
