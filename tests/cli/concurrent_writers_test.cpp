// Processes that write the same files at once (docs/concurrency.md): several `parity convert`
// runs with one output plan, one timing cache and one calibration cache all succeed, and each
// file is left complete (it loads or parses, with every entry) and alone (no temporary files).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "core/formats/file_io.h"
#include "runtime/plan/plan_file.h"
#include "runtime/tactics.h"
#include "support/test_support.h"
#include "tools/calibration.h"
#include "tools/navigator/workspace_lock.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kProcesses = 4;

// Starts kProcesses copies of the parity command `args` together and waits for all; the exit
// status is 0 only when every copy exited 0 (each copy's output goes to log<i>.txt in `dir`).
CommandResult run_parity_copies(const fs::path& dir, const std::string& args) {
  std::string script = "cd '" + dir.string() + "' && pids=''; for i in $(seq " + std::to_string(kProcesses) + "); do '" +
                       std::string(PARITY_BINARY) + "' " + args + " > log$i.txt 2>&1 & pids=\"$pids $!\"; done; " +
                       "status=0; for p in $pids; do wait $p || status=1; done; " +
                       "[ $status = 0 ] || cat log*.txt; exit $status";
  return run_shell(script);
}

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() != ".txt") names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string demo_model() { return (source_dir() / "models/demo.onnx").string(); }

TEST(ConcurrentWriters, ConvertsSharingOnePlanAndTimingCacheLeaveBothComplete) {
  TempDir dir;
  const auto solo = run_parity({"convert", demo_model(), "-o", (dir / "solo.plan").string(), "--time-tactics",
                                "--save-timing-cache", (dir / "solo.json").string()});
  ASSERT_EQ(solo.exit_code, 0) << solo.output;
  const size_t entries =
      runtime::TimingCache::from_json(formats::read_binary_file((dir / "solo.json").string()), "solo").size();
  ASSERT_GT(entries, 0u);

  TempDir shared;
  const auto r = run_parity_copies(shared.path(), "convert '" + demo_model() +
                                                      "' -o shared.plan --time-tactics --save-timing-cache shared.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(files_in(shared.path()), (std::vector<std::string>{"shared.json", "shared.plan"}));
  EXPECT_EQ(runtime::TimingCache::from_json(formats::read_binary_file((shared / "shared.json").string()), "shared").size(),
            entries)
      << "the last complete write: every node's times, from one build";
  const runtime::Session loaded = runtime::plan::load_plan(shared / "shared.plan").value();
  EXPECT_EQ(loaded.output_names(), runtime::plan::load_plan(dir / "solo.plan").value().output_names());
}

TEST(ConcurrentWriters, Int8ConvertsSharingOneCalibrationCacheLeaveItComplete) {
  TempDir dir;
  const auto solo = run_parity({"convert", demo_model(), "-o", (dir / "solo.plan").string(), "--int8",
                                "--calibration-cache", (dir / "solo.cache").string()});
  ASSERT_EQ(solo.exit_code, 0) << solo.output;
  const tools::CalibrationTable expected = tools::read_calibration_cache(dir / "solo.cache");
  ASSERT_FALSE(expected.scales.empty());

  TempDir shared;
  const auto r = run_parity_copies(shared.path(), "convert '" + demo_model() +
                                                      "' -o int8.plan --int8 --calibration-cache calibration.cache");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(files_in(shared.path()), (std::vector<std::string>{"calibration.cache", "int8.plan"}));
  // Every writer calibrated the same seeded feeds (or read a complete cache another one wrote).
  EXPECT_EQ(tools::read_calibration_cache(shared / "calibration.cache").scales, expected.scales);
  EXPECT_TRUE(runtime::plan::load_plan(shared / "int8.plan").is_ok());
}

// A workspace another process is writing: `optimize --override-workspace` over it is refused with
// one line and exit 1, and the workspace is left as it was.
TEST(ConcurrentWriters, OptimizeOverAWorkspaceInUseIsRefusedAndLeavesItAlone) {
  TempDir dir;
  const fs::path workspace = dir / "demo.nav.workspace";
  const std::vector<std::string> optimize = {"optimize", demo_model(), "--workspace", workspace.string(),
                                             "--override-workspace", "--runners", "ref", "--target-formats", "onnx",
                                             "--sample-count", "1", "--window-ms", "5", "--max-trials", "2"};
  ASSERT_EQ(run_parity(optimize).exit_code, 0);
  const std::string status_before = formats::read_binary_file((workspace / "status.yaml").string());

  const tools::navigator::WorkspaceLock holder(workspace, tools::navigator::WorkspaceLock::Mode::kExclusive);
  const CommandResult refused = run_parity(optimize);
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_NE(refused.output.find("[E] the workspace " + workspace.string() + " is in use by another parity process"),
            std::string::npos)
      << refused.output;
  EXPECT_EQ(formats::read_binary_file((workspace / "status.yaml").string()), status_before);
  const CommandResult retest = run_parity({"package", "retest", workspace.string()});
  EXPECT_EQ(retest.exit_code, 1) << retest.output;
  EXPECT_NE(retest.output.find("is in use by another parity process"), std::string::npos) << retest.output;
}

}  // namespace
}  // namespace parity::testing
