// `parity debug repeat` (runs sorted into good/bad with their artifacts, --until) and
// `parity data to-input` (inputs plus a Polygraphy `mark all` RunResults merged into one inputs
// file that feeds any subgraph).
#include <gtest/gtest.h>

#include <filesystem>

#include "core/formats/polygraphy_json.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using testing::run_parity;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(DebugRepeat, SortsEachRunsArtifactIntoGoodOrBad) {
  testing::TempDir tmp;
  const std::string out = (tmp / "out.txt").string();
  // Even runs pass, odd runs fail; each writes its number to out.txt.
  const auto r = run_parity({"debug", "repeat", "--until", "4", "--artifacts", out, "--artifacts-dir",
                             (tmp / "art").string(), "--check", "sh", "-c",
                             "echo {iteration} > " + out + "; test $(( {iteration} % 2 )) -eq 0"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Finished 4 iteration(s) | Passed: 2/4 | Pass Rate: 50.0%")) << r.output;
  EXPECT_EQ(testing::read_file(tmp / "art" / "bad" / "out_iter1_rc1.txt"), "1\n");
  EXPECT_EQ(testing::read_file(tmp / "art" / "good" / "out_iter2_rc0.txt"), "2\n");
  EXPECT_TRUE(fs::exists(tmp / "art" / "bad" / "out_iter3_rc1.txt"));
  EXPECT_TRUE(fs::exists(tmp / "art" / "good" / "out_iter4_rc0.txt"));
}

// test_debug.py TestRepeat, as Polygraphy's tests type it (its Python check script written in sh).
TEST(DebugRepeat, PolygraphyTestRepeatCases) {
  struct Until {
    std::string until, check;
    int iterations;
  };
  for (const Until& c : {Until{"good", "true", 1}, Until{"bad", "false", 1}, Until{"5", "false", 5}}) {
    const auto r = run_parity({"debug", "repeat", "--until", c.until, "--check", c.check});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "Finished " + std::to_string(c.iterations) + " iteration(s)")) << r.output;
  }
  struct FailCode {
    std::vector<std::string> options;
    std::string expected;
  };
  for (const FailCode& c : {FailCode{{}, "Passed: 0/5 | Pass Rate: 0.0%"},
                            FailCode{{"--ignore-fail-code=2"}, "Passed: 0/5 | Pass Rate: 0.0%"},
                            FailCode{{"--ignore-fail-code=1"}, "Passed: 5/5 | Pass Rate: 100.0%"}}) {
    std::vector<std::string> args = {"debug", "repeat", "--until=5"};
    args.insert(args.end(), c.options.begin(), c.options.end());
    args.insert(args.end(), {"--check", "false"});
    const auto r = run_parity(args);
    EXPECT_TRUE(contains(r.output, c.expected)) << r.output;
  }
  // test_iteration_info: each run reads its iteration number (from 0) and must see a new one.
  testing::TempDir tmp;
  const std::string info = (tmp / "iter_info.json").string();
  const std::string check = (tmp / "check.sh").string();
  testing::write_file(check, "n=$(sed 's/[^0-9]//g' '" + info + "'); f='" + (tmp / "").string() +
                                 "'$n.txt; test ! -e \"$f\" && echo File > \"$f\"\n");
  const auto r = run_parity({"debug", "repeat", "--until=5", "--iteration-info", info, "--show-output", "--check", "sh",
                             check});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(contains(r.output, "FAILED")) << r.output;
  EXPECT_TRUE(contains(r.output, "Passed: 5/5 | Pass Rate: 100.0%")) << r.output;
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(fs::exists(tmp / (std::to_string(i) + ".txt"))) << i;
  EXPECT_FALSE(fs::exists(info));
}

TEST(DebugRepeat, StopsAtTheFirstBadOrGoodRun) {
  auto r = run_parity({"debug", "repeat", "--until", "bad", "--check", "sh", "-c", "test {iteration} -lt 3"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Passed: 2/3")) << r.output;
  r = run_parity({"debug", "repeat", "--until", "good", "--check", "sh", "-c", "test {iteration} -ge 2"});
  EXPECT_TRUE(contains(r.output, "Passed: 1/2")) << r.output;
  // --fail-regex: only failures whose output matches count as bad.
  r = run_parity({"debug", "repeat", "--until", "2", "--fail-regex", "segfault", "--check", "sh", "-c", "echo oops; exit 3"});
  EXPECT_TRUE(contains(r.output, "Passed: 2/2")) << r.output;
  r = run_parity({"debug", "repeat", "--until", "2", "--ignore-fail-code", "3", "--check", "sh", "-c", "exit 3"});
  EXPECT_TRUE(contains(r.output, "Passed: 2/2")) << r.output;
}

TEST(DebugRepeat, BadInputIsOneLine) {
  auto r = run_parity({"debug", "repeat", "--until", "2", "--check", "no-such-command-xyz"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.last_line(), "FAILED")) << r.output;
  EXPECT_TRUE(contains(r.output, "command 'no-such-command-xyz' not found")) << r.output;
  r = run_parity({"debug", "repeat", "--until", "sometimes", "--check", "true"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--until")) << r.output;
}

TEST(DataToInputCommand, MergesPolygraphyInputsAndMarkAllOutputsIntoOneFeed) {
  const std::string fixtures = (testing::polygraphy_fixtures_dir()).string();
  const std::string hello_deepa = (testing::source_dir() / ".cache/npm/openwakeword/models/hello_deepa.onnx").string();
  PARITY_REQUIRE_FILE(hello_deepa);
  testing::TempDir tmp;
  const std::string merged = (tmp / "merged.json").string();
  auto r = run_parity({"data", "to-input", fixtures + "/hello_deepa_markall_inputs.json",
                       fixtures + "/hello_deepa_markall_outputs.json", "-o", merged});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto feeds = read_inputs_json(merged);
  ASSERT_EQ(feeds.size(), 1u);
  EXPECT_EQ(feeds[0].size(), 26u);  // the model input and 25 layer outputs
  EXPECT_TRUE(feeds[0].contains("onnx::Flatten_0"));
  EXPECT_TRUE(feeds[0].contains("/layer1/Gemm_output_0"));

  // A subgraph starting mid-model runs on the merged file: its input is one of Polygraphy's layers.
  const std::string sub = (tmp / "sub.onnx").string();
  r = run_parity({"surgeon", "extract", hello_deepa, "--inputs", "/layer1/Gemm_output_0:auto:auto", "--outputs",
                  "/layernorm1/Sub_output_0:auto", "-o", sub});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_parity({"run", sub, "--ref", "--load-inputs", merged});
  EXPECT_EQ(r.exit_code, 0) << r.output;

  r = run_parity({"data", "to-input", (tmp / "missing.json").string(), "-o", (tmp / "x.json").string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "no such file")) << r.output;
}

}  // namespace
}  // namespace parity
