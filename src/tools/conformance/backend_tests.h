// The ONNX backend test layout (model.onnx + test_data_set_N/{input,output}_K.pb) run against any
// registered runner, test by test, with numpy.testing.assert_allclose's comparison (exact for
// integers, bools and strings): `parity test onnx-backend`.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compare/backend_test_data.h"
#include "runners/registry.h"
#include "runtime/session.h"

namespace parity::tools {

/// How one backend test ended.
enum class BackendOutcome { kPass, kFail, kError, kSkip };
/// "pass", "fail", "error" or "skipped".
const char* backend_outcome_name(BackendOutcome outcome);

/// One backend test's result.
struct BackendTestResult {
  std::string id;  // "<kind folder>/<test folder>", the key of the skip file
  BackendOutcome outcome = BackendOutcome::kPass;
  std::string message;
  double max_abs_error = 0.0;
  double seconds = 0.0;
  std::string op_type, domain;  // the operator under test (with identify_operators)
};

/// What run_backend_tests runs and how it compares.
struct BackendTestOptions {
  /// Test folders, or folders of test folders.
  std::vector<std::string> dirs;
  /// Only tests whose id matches this regular expression (search).
  std::optional<std::string> filter;
  /// Tests to skip, with their reasons.
  compare::BackendSkips skips;
  /// The registered runner to test.
  std::string runner = "ref";
  /// The runtimes' own options, as runners::RunnerConfig takes them (empty: defaults).
  runners::RunnerOptions runner_options;
  /// Tolerances; when either is given, tests' data.json tolerances are ignored.
  std::optional<double> rtol, atol;
  /// The session the ref runner's tests run in (threads, precision).
  runtime::SessionOptions session;
  /// Find each test's operator (BackendTestResult::op_type), for a report by operator family.
  bool identify_operators = false;
  /// Called with each result as it is known.
  std::function<void(const BackendTestResult&)> on_result;
};

/// Runs every selected backend test; a test's own failure is its result, never an exception.
/// Throws kNotFound for a folder holding no tests, kInvalidArgument for a bad filter or an unknown
/// runner, kUnavailable for a runner that cannot run here.
std::vector<BackendTestResult> run_backend_tests(const BackendTestOptions& options);

/// The skip file shipped with parity: PARITY_CONFORMANCE_SKIPS, else the one next to the source
/// tree of a build (build/bin/parity) or installed under share/parity.
std::optional<std::filesystem::path> default_backend_skip_file();

}  // namespace parity::tools
