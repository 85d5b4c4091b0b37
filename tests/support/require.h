// Test dependencies: a test that needs ONNX Runtime, OpenCV, LibTorch, the fetched models or the
// ONNX test data skips with the reason when they are missing, and fails instead under CI=true.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace parity::testing {

/// True when the environment variable CI is "true": a test whose dependency (ONNX Runtime, OpenCV,
/// LibTorch, the fetched models, the ONNX test data) is missing then fails instead of skipping.
bool in_ci();
/// Why the named runner ("ort", "opencv", "torch") cannot run here; empty when it can.
std::string runner_unavailable_reason(const std::string& name);
inline bool runner_available(const std::string& name) { return runner_unavailable_reason(name).empty(); }
/// "<path> missing (run scripts/setup.sh)".
std::string missing_file_reason(const std::filesystem::path& path);

}  // namespace parity::testing

/// Skips the current test (returning from the enclosing void function) with `reason` unless
/// `condition` holds; with CI=true it fails the test instead, so a CI run cannot pass by skipping.
/// `reason` (a std::string expression) is evaluated only when the condition does not hold.
#define PARITY_REQUIRE(condition, reason)                                                          \
  do {                                                                                             \
    if (!(condition)) {                                                                            \
      const std::string parity_require_reason_ = (reason);                                         \
      if (::parity::testing::in_ci())                                                              \
        GTEST_FAIL() << "CI=true, and this test's dependency is missing: " << parity_require_reason_; \
      GTEST_SKIP() << parity_require_reason_;                                                      \
    }                                                                                              \
  } while (0)

/// PARITY_REQUIRE for a runner ("ort", "opencv", "torch") that must be built and loadable.
#define PARITY_REQUIRE_RUNNER(name)                                               \
  PARITY_REQUIRE(::parity::testing::runner_available(name),                       \
                 std::string("needs the ") + (name) + " runner: " +                 \
                     ::parity::testing::runner_unavailable_reason(name))

/// PARITY_REQUIRE for a file fetched or installed by scripts/setup.sh (models, test data).
#define PARITY_REQUIRE_FILE(path) \
  PARITY_REQUIRE(std::filesystem::exists(path), ::parity::testing::missing_file_reason(path))

