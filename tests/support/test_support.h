// Helpers shared by parity's tests: temp folders, running the CLI, fixture paths.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "runtime/cpu_isa.h"

namespace parity::testing {

/// A fresh temporary directory, removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
  /// Last non-empty line of the output.
  std::string last_line() const;
};

/// Runs the built `parity` binary with the given arguments (shell-quoted), capturing output.
CommandResult run_parity(const std::vector<std::string>& args);
/// Runs a shell command, capturing stdout+stderr.
CommandResult run_shell(const std::string& command);
/// The test-only extension module whose runners segfault, abort or hang when activated
/// (--test-segfault, --test-abort, --test-hang, --test-crash-prone).
std::string failing_runners_extension();
/// run_parity with that extension loaded through PARITY_EXTENSION_PATH (inherited by subprocesses).
CommandResult run_with_failing_runners(const std::vector<std::string>& args);

/// The vector tier this test process builds optimized sessions at: the CPU's, lowered to
/// $PARITY_TEST_KERNEL_ISA ("avx2", "baseline") where CTest's capped registration sets it
/// (tests/CMakeLists.txt), so the optimized-kernel suites run every path on any machine.
runtime::KernelIsa test_kernel_isa();
/// Every tier up to test_kernel_isa(), highest first: what the direct loops' own tests compare
/// against the reference on.
std::vector<runtime::KernelIsa> tested_kernel_isas();

std::filesystem::path source_dir();
/// Files written by the real Polygraphy (tests/data/polygraphy_files).
std::filesystem::path polygraphy_fixtures_dir();
/// torch 2.x dynamo exports with Polygraphy + ONNX Runtime outputs (tests/data/modern_models).
std::filesystem::path modern_models_dir();
std::filesystem::path onnx_testdata_dir();
/// Calls `visit` with the folder of every ONNX node test that has a model.onnx (ONNX 1.12's suite,
/// then 1.23's) and returns how many. A missing suite fails the calling test under CI.
int for_each_onnx_node_test(const std::function<void(const std::filesystem::path& test_dir)>& visit);
std::string read_file(const std::filesystem::path& path);
/// The message of the parity::Error `fn` throws; the test fails unless it throws one, and one
/// that is a user error (not an internal one) of a single line.
std::string user_error_of(const std::function<void()>& fn);
void write_file(const std::filesystem::path& path, const std::string& contents);

}  // namespace parity::testing
