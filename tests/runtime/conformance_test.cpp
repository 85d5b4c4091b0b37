// Runs the whole ONNX backend suite through `parity test onnx-backend` with the ref runner and
// fails if any folder's pass count drops below tests/runtime/conformance_baseline.txt.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/test_support.h"

namespace parity::testing {
namespace {

/// Lines "<mode> <folder> <minimum passes>", e.g. "fp32 node 900".
std::map<std::string, int> read_baseline(const std::string& mode) {
  std::ifstream in(source_dir() / "tests/runtime/conformance_baseline.txt");
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

void check_suite(const std::string& mode, const std::vector<std::string>& extra_args) {
  const auto baseline = read_baseline(mode);
  ASSERT_FALSE(baseline.empty()) << "conformance_baseline.txt is empty or missing";
  TempDir tmp;
  std::vector<std::string> args = {"test", "onnx-backend", "--report", (tmp / "report.json").string(), "--skip-file",
                                   (source_dir() / "tests/runtime/conformance_skips.txt").string()};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  CommandResult r = run_parity(args);
  std::ifstream in(tmp / "report.json");
  ASSERT_TRUE(in) << r.output;
  const auto report = nlohmann::json::parse(in);
  std::map<std::string, int> passed;
  std::string problems;
  for (const auto& t : report["tests"]) {
    const std::string id = t["id"];
    const std::string kind = id.substr(0, id.find('/'));
    if (t["result"] == "pass") ++passed[kind];
    else if (t["result"] != "skipped") problems += "  " + id + ": " + t.value("message", std::string()) + "\n";
  }
  for (const auto& [kind, count] : baseline)
    EXPECT_GE(passed[kind], count) << "pass count of '" << kind << "' dropped below the baseline";
  for (const auto& [kind, count] : passed) std::printf("%s: %d passed\n", kind.c_str(), count);
  if (!problems.empty()) std::printf("Failing or erroring tests (not yet skipped or fixed):\n%s", problems.c_str());
  EXPECT_NE(r.output.find("Summary: "), std::string::npos);
}

TEST(Conformance, OnnxBackendSuiteFp32) { check_suite("fp32", {}); }

TEST(Conformance, OnnxBackendSuiteFp64Oracle) { check_suite("fp64", {"--precision", "fp64"}); }

}  // namespace
}  // namespace parity::testing
