// End-to-end tests of `parity bench`: the Markdown and JSON reports have one row per model and
// thread count with finite positive medians, unavailable runners show as n/a, and bad input is one
// clear error that writes nothing. No assertion depends on how fast anything ran.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "runners/registry.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

const std::string kDemo = (source_dir() / "models" / "demo.onnx").string();

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The fastest settings that still time every runner a few times.
std::vector<std::string> quick(std::vector<std::string> args) {
  for (const char* a : {"--iterations", "3", "--min-time", "0", "--warm-up", "1"}) args.push_back(a);
  return args;
}

void expect_timed(const nlohmann::json& cell, const std::string& what) {
  ASSERT_TRUE(cell.contains("median_ms")) << what << ": " << cell.dump();
  const double median = cell["median_ms"].get<double>();
  EXPECT_TRUE(std::isfinite(median) && median > 0) << what << ": " << median;
  EXPECT_LE(cell["p10_ms"].get<double>(), median) << what;
  EXPECT_GE(cell["p90_ms"].get<double>(), median) << what;
  EXPECT_GE(cell["iterations"].get<int>(), 3) << what;
  EXPECT_EQ(cell["samples_ms"].size(), cell["iterations"].get<size_t>()) << what;
}

TEST(BenchCommand, RefAndOrtReportMediansAndRatio) {
  PARITY_REQUIRE_RUNNER("ort");
  TempDir dir;
  auto r = run_parity(quick({"bench", kDemo, "--runners", "ref,ort", "--threads", "1", "--markdown",
                             (dir / "table.md").string(), "--json", (dir / "bench.json").string()}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.last_line(), "PASSED")) << r.output;
  EXPECT_TRUE(contains(r.output, "ref/ort geometric mean: 1 thread: ")) << r.output;
  EXPECT_TRUE(contains(r.output, "CPU time per wall time (median over models): 1 thread: ref ")) << r.output;

  const std::string md = read_file(dir / "table.md");
  EXPECT_TRUE(contains(md, "| model | input | threads | ref ms median (p10-p90) | ort ms median (p10-p90) | ref/ort |"))
      << md;
  EXPECT_TRUE(contains(md, "|---|---|---|--:|--:|--:|")) << md;
  EXPECT_TRUE(contains(md, "| demo | ")) << md;
  EXPECT_TRUE(contains(md, " | 1 | ")) << md;
  EXPECT_FALSE(contains(md, "n/a")) << md;

  const auto report = nlohmann::json::parse(read_file(dir / "bench.json"));
  ASSERT_EQ(report["results"].size(), 1u);
  const auto& row = report["results"][0];
  EXPECT_EQ(row["label"], "demo");
  EXPECT_EQ(row["threads"], 1);
  expect_timed(row["runners"]["ref"], "ref");
  expect_timed(row["runners"]["ort"], "ort");
  const double ratio = row["ref_over_ort"].get<double>();
  EXPECT_NEAR(ratio, row["runners"]["ref"]["median_ms"].get<double>() / row["runners"]["ort"]["median_ms"].get<double>(),
              1e-9 * ratio);
  EXPECT_EQ(report["settings"]["threads"], nlohmann::json::array({1}));
  EXPECT_FALSE(report["machine"]["cpu"].get<std::string>().empty());
}

TEST(BenchCommand, OneRowPerThreadCountAndProfile) {
  TempDir dir;
  auto r = run_parity(quick({"bench", kDemo, "--runners", "ref", "--threads", "1,2", "--profile", "--json",
                             (dir / "bench.json").string()}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto report = nlohmann::json::parse(read_file(dir / "bench.json"));
  ASSERT_EQ(report["results"].size(), 2u);
  EXPECT_EQ(report["results"][0]["threads"], 1);
  EXPECT_EQ(report["results"][1]["threads"], 2);
  for (const auto& row : report["results"]) {
    expect_timed(row["runners"]["ref"], "ref");
    EXPECT_TRUE(row["ref_over_ort"].is_null());
    // The profile accounts for the model's nodes by operator type; the demo is a conv net.
    const auto& ops = row["ref_profile"]["ops"];
    ASSERT_FALSE(ops.empty()) << row.dump();
    bool has_conv = false;
    for (const auto& op : ops) has_conv |= op["op_type"] == "Conv";
    EXPECT_TRUE(has_conv) << ops.dump();
    // Node by node too, slowest first, each with the shape it produced.
    const auto& nodes = row["ref_profile"]["slowest_nodes"];
    ASSERT_FALSE(nodes.empty()) << row.dump();
    for (size_t i = 1; i < nodes.size(); ++i) EXPECT_GE(nodes[i - 1]["ms"].get<double>(), nodes[i]["ms"].get<double>());
    for (const auto& node : nodes) EXPECT_FALSE(node["output_shape"].get<std::string>().empty()) << node.dump();
  }
  EXPECT_TRUE(contains(r.output, "ref per operator type: demo at 1 thread(s), ")) << r.output;
}

TEST(BenchCommand, UnavailableRunnerIsNotApplicable) {
  TempDir dir;
  auto r = run_parity(quick({"bench", kDemo, "--runners", "ref,ort", "--threads", "1", "--ort-library",
                             "/nonexistent/libonnxruntime.so", "--markdown", (dir / "table.md").string(), "--json",
                             (dir / "bench.json").string()}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string md = read_file(dir / "table.md");
  EXPECT_TRUE(contains(md, "| n/a (1) |")) << md;
  EXPECT_TRUE(contains(md, "(1) ort on demo: unavailable: ")) << md;
  const auto report = nlohmann::json::parse(read_file(dir / "bench.json"));
  const auto& row = report["results"][0];
  EXPECT_TRUE(contains(row["runners"]["ort"]["unavailable"].get<std::string>(), "/nonexistent")) << row.dump();
  expect_timed(row["runners"]["ref"], "ref");
  EXPECT_TRUE(row["ref_over_ort"].is_null());

  // With nothing left to time the row has no figure at all: FAILED.
  auto none = run_parity(quick({"bench", kDemo, "--runners", "ort", "--threads", "1", "--ort-library",
                                "/nonexistent/libonnxruntime.so"}));
  EXPECT_EQ(none.exit_code, 1) << none.output;
  EXPECT_TRUE(contains(none.output, "no runner could be timed")) << none.output;
}

TEST(BenchCommand, BadRunnerOptionIsAnErrorNotNotApplicable) {
  PARITY_REQUIRE_RUNNER("ort");
  auto r = run_parity(quick({"bench", kDemo, "--runners", "ref,ort", "--threads", "1", "--ort-config", "novalue"}));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "[E] --ort-config 'novalue' must be KEY=VALUE")) << r.output;
  // A bad value of a real key is ONNX Runtime's to reject when it loads the model: n/a, with its reason.
  auto bad = run_parity(quick({"bench", kDemo, "--runners", "ref,ort", "--threads", "1", "--ort-config",
                               "session.intra_op.allow_spinning=2"}));
  EXPECT_EQ(bad.exit_code, 0) << bad.output;
  EXPECT_TRUE(contains(bad.output, "allow_spinning")) << bad.output;
}

// trtexec-style timing: --duration bounds the row's time, --percentile adds latency percentiles,
// and ref's GFLOP/s is the graph's FLOPs (inspect model --show cost) over its median, beside the
// measured sgemm ceiling.
TEST(BenchCommand, DurationPercentilesAndGflops) {
  TempDir dir;
  auto r = run_parity({"bench", kDemo, "--runners", "ref", "--threads", "1", "--iterations", "3", "--duration", "0.3",
                       "--warm-up", "1", "--percentile", "90,95,99", "--json", (dir / "bench.json").string(),
                       "--markdown", (dir / "table.md").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "sgemm ceiling (ref MatMul 1024x1024x1024, best run): 1 thread ")) << r.output;
  EXPECT_TRUE(contains(r.output, "Latency percentiles (ms):\n    demo at 1 thread(s): ref p90 ")) << r.output;
  EXPECT_TRUE(contains(read_file(dir / "table.md"), "| ref GFLOP/s (of sgemm) |"));

  const auto report = nlohmann::json::parse(read_file(dir / "bench.json"));
  EXPECT_EQ(report["settings"]["percentiles"], nlohmann::json::array({90.0, 95.0, 99.0}));
  const double ceiling = report["sgemm_gflops"]["1"].get<double>();
  EXPECT_TRUE(std::isfinite(ceiling) && ceiling > 0) << ceiling;
  const auto& row = report["results"][0];
  // demo.onnx: Conv 16x32x32 outputs x 27 + Conv 16x16x16 x 144 + Gemm 10 x 1024 MACs.
  EXPECT_EQ(row["flops"].get<double>(), 2.0 * (16 * 32 * 32 * 27 + 16 * 16 * 16 * 144 + 10 * 1024));
  const auto& ref = row["runners"]["ref"];
  const auto& p = ref["percentiles"];
  EXPECT_LE(ref["median_ms"].get<double>(), p["p90_ms"].get<double>());
  EXPECT_LE(p["p90_ms"].get<double>(), p["p95_ms"].get<double>());
  EXPECT_LE(p["p95_ms"].get<double>(), p["p99_ms"].get<double>());
  EXPECT_NEAR(ref["gflops"].get<double>(), row["flops"].get<double>() / ref["median_ms"].get<double>() / 1e6,
              1e-9 * ref["gflops"].get<double>());
  // --duration is a lower bound on the timed span: at 0.3 s the tiny model runs far more than 3 times.
  EXPECT_GT(ref["iterations"].get<int>(), 3);
}

TEST(BenchCommand, BadInputIsOneErrorAndWritesNothing) {
  TempDir dir;
  const std::string md = (dir / "table.md").string();
  write_file(md, "keep");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"bench", (dir / "missing.onnx").string()}, "missing.onnx"},
      {{"bench", kDemo, "--runners", "ref,nosuch"}, "unknown runner 'nosuch'"},
      {{"bench", kDemo, "--runners", "ref,ref"}, "'ref' is named twice"},
      {{"bench", kDemo, "--threads", "0"}, "--threads must be between 1 and 1024, got 0"},
      {{"bench", kDemo, "--threads", "two"}, "invalid integer 'two' for --threads"},
      {{"bench", kDemo, "--concurrent", "0"}, "--concurrent must be between 1 and 1024, got 0"},
      {{"bench", kDemo, "--concurrent", "two"}, "invalid integer 'two' for --concurrent"},
      {{"bench", kDemo, "--iterations", "0"}, "--iterations must be at least 1"},
      {{"bench", kDemo, "--min-time", "-1"}, "--min-time must be 0 or more"},
      {{"bench", kDemo, "--duration", "-1"}, "--duration must be 0 or more"},
      {{"bench", kDemo, "--percentile", "90,101"}, "--percentile must be between 0 and 100, got 101"},
      {{"bench", kDemo, "--percentile", "p99"}, "--percentile"},
      {{"bench", kDemo, "--input-shapes", "other=x:[1,3]"}, "no model given is called 'other'"},
      {{"bench", kDemo, "--input-shapes", "x"}, "must be [MODEL=]name:[d0,d1,...]"},
      {{"bench", kDemo, "--json", (dir / "no-such-folder" / "b.json").string()}, "no-such-folder"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--markdown", md});
    auto r = run_parity(args);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r.output, "[E] ") && contains(r.output, c.message)) << c.message << "\n" << r.output;
    EXPECT_TRUE(contains(r.last_line(), "FAILED")) << r.output;
    EXPECT_EQ(read_file(md), "keep") << c.message;
  }
}

// --concurrent: one ref Session shared by N threads; the table and the JSON report inferences per
// second at 1 thread (the baseline) and at each count given, with every round.
TEST(BenchCommand, ConcurrentReportsInferencesPerSecondPerThreadCount) {
  TempDir dir;
  auto r = run_parity(quick({"bench", kDemo, "--runners", "ref", "--threads", "1", "--no-ceiling", "--concurrent", "2",
                             "--json", (dir / "bench.json").string()}));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Throughput: one ref Session shared by N threads, 1 kernel thread each")) << r.output;
  EXPECT_TRUE(contains(r.output, "inferences/s")) << r.output;
  const auto report = nlohmann::json::parse(read_file(dir / "bench.json"));
  ASSERT_EQ(report["concurrent"].size(), 2u) << report.dump();
  for (size_t i = 0; i < 2; ++i) {
    const auto& row = report["concurrent"][i];
    EXPECT_EQ(row["label"], "demo");
    EXPECT_EQ(row["threads"], static_cast<int>(i + 1));
    EXPECT_EQ(row["kernel_threads_per_run"], 1);
    EXPECT_GT(row["inferences_per_second"].get<double>(), 0.0) << row.dump();
    EXPECT_EQ(row["rounds_per_second"].size(), 3u);
    EXPECT_GT(row["cpu_seconds_per_inference"].get<double>(), 0.0) << row.dump();
    EXPECT_GT(row["speedup_over_1_thread"].get<double>(), 0.0);
  }
  EXPECT_DOUBLE_EQ(report["concurrent"][0]["speedup_over_1_thread"].get<double>(), 1.0);
}

}  // namespace
}  // namespace parity::testing
