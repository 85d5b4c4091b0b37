// Runs the whole ONNX backend suite through `parity test onnx-backend` with the ref runner and
// fails on any case that fails or errors without being listed, with its reason, in the suite's skip
// file (tests/runtime/conformance_skips.txt), and if any folder's pass count drops below
// tests/runtime/conformance_baseline.txt; likewise
// ONNX 1.23's node suite (unpacked by scripts/setup.sh) against conformance_1_23_baseline.txt,
// with its own skip file conformance_1_23_skips.txt.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/require.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

/// Lines "<mode> <folder> <minimum passes>", e.g. "fp32 node 900".
std::map<std::string, int> read_baseline(const std::string& mode, const std::string& file) {
  std::ifstream in(source_dir() / "tests/runtime" / file);
  std::map<std::string, int> baseline;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string line_mode, kind;
    int count = 0;
    if (ls >> line_mode >> kind >> count && line_mode == mode) baseline[kind] = count;
  }
  return baseline;
}

/// Which suite to run: its test folders (none: the installed 1.12 test data) and its two files.
struct Suite {
  std::vector<std::string> dirs;
  std::string baseline_file = "conformance_baseline.txt";
  std::string skip_file = "conformance_skips.txt";
};

void check_suite(const std::string& mode, const std::vector<std::string>& extra_args, const Suite& suite = {}) {
  const auto baseline = read_baseline(mode, suite.baseline_file);
  ASSERT_FALSE(baseline.empty()) << suite.baseline_file << " is empty or missing";
  PARITY_REQUIRE_FILE(suite.dirs.empty() ? onnx_testdata_dir() / "node" : std::filesystem::path(suite.dirs.front()));
  TempDir tmp;
  std::vector<std::string> args = {"test", "onnx-backend", "--report", (tmp / "report.json").string(), "--skip-file",
                                   (source_dir() / "tests/runtime" / suite.skip_file).string()};
  args.insert(args.end(), suite.dirs.begin(), suite.dirs.end());
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  CommandResult r = run_parity(args);
  std::ifstream in(tmp / "report.json");
  ASSERT_TRUE(in) << r.output;
  const auto report = nlohmann::json::parse(in);
  std::map<std::string, int> passed;
  std::string problems;
  for (const auto& t : report["sections"][0]["tests"]) {
    const std::string id = t["id"];
    const std::string kind = id.substr(0, id.find('/'));
    if (t["result"] == "pass") ++passed[kind];
    else if (t["result"] != "skipped") problems += "  " + id + ": " + t.value("message", std::string()) + "\n";
  }
  for (const auto& [kind, count] : baseline)
    EXPECT_GE(passed[kind], count) << "pass count of '" << kind << "' dropped below the baseline";
  for (const auto& [kind, count] : passed) std::printf("%s: %d passed\n", kind.c_str(), count);
  EXPECT_TRUE(problems.empty()) << "failing or erroring ONNX backend tests (fix them, or list them in "
                                << suite.skip_file << " with the reason):\n"
                                << problems;
  EXPECT_NE(r.output.find("Summary: "), std::string::npos);
}

TEST(Conformance, OnnxBackendSuiteFp32) { check_suite("fp32", {}); }

TEST(Conformance, OnnxBackendSuiteFp64Oracle) { check_suite("fp64", {"--precision", "fp64"}); }

Suite onnx_1_23_suite() {
  const std::filesystem::path dir = source_dir() / ".cache/onnx-testdata-1.23/node";
  return {{dir.string()}, "conformance_1_23_baseline.txt", "conformance_1_23_skips.txt"};
}

TEST(Conformance, Onnx123NodeSuiteFp32) { check_suite("fp32", {}, onnx_1_23_suite()); }

TEST(Conformance, Onnx123NodeSuiteFp64Oracle) { check_suite("fp64", {"--precision", "fp64"}, onnx_1_23_suite()); }

// The ort runner on ONNX 1.23's node suite, without a skip file: every tensor type of the suite
// (float8, float4, int4/uint4, int2/uint2 included) is fed to ONNX Runtime and read back, so a case
// errors only where ONNX Runtime itself refuses the model or fails running it (IR 14, ops or types
// it lacks), never on a parity limit; and the pass count holds conformance_1_23_baseline.txt's.
TEST(Conformance, Onnx123NodeSuiteOrtRunnerErrsOnlyWhereOnnxRuntimeDoes) {
  PARITY_REQUIRE_RUNNER("ort");
  const Suite suite = onnx_1_23_suite();
  PARITY_REQUIRE_FILE(suite.dirs.front());
  const auto baseline = read_baseline("ort", suite.baseline_file);
  ASSERT_EQ(baseline.count("node"), 1u) << "no 'ort node N' line in " << suite.baseline_file;
  TempDir tmp;
  const CommandResult r = run_parity({"test", "onnx-backend", suite.dirs.front(), "--runner", "ort", "--no-skip-file",
                                      "--ort-threads", "1", "--report", (tmp / "report.json").string()});
  std::ifstream in(tmp / "report.json");
  ASSERT_TRUE(in) << r.output;
  const auto report = nlohmann::json::parse(in);
  int passed = 0;
  std::string parity_errors;
  for (const auto& t : report["sections"][0]["tests"]) {
    if (t["result"] == "pass") ++passed;
    const std::string message = t.value("message", std::string());
    if (t["result"] == "error" && message.rfind("ONNX Runtime ", 0) != 0)
      parity_errors += "  " + t["id"].get<std::string>() + ": " + message + "\n";
  }
  std::printf("ort on the 1.23 node suite: %d passed\n", passed);
  EXPECT_GE(passed, baseline.at("node")) << "ort's pass count dropped below the baseline";
  EXPECT_TRUE(parity_errors.empty()) << "cases that error in parity, not in ONNX Runtime:\n" << parity_errors;
}

}  // namespace
}  // namespace parity::testing
