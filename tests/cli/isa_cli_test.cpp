// --isa on run, bench and convert: parity's kernels and oneDNN capped together, the cap recorded in
// plans, and bench naming the machine and the code paths its figures come from.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "runtime/cpu_isa.h"
#include "support/require.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

const std::string kDemo = (source_dir() / "models" / "demo.onnx").string();

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(IsaOption, RunAtEveryCapMatchesOnnxRuntime) {
  PARITY_REQUIRE_RUNNER("ort");
  for (const char* isa : {"native", "avx2", "baseline"}) {
    const auto r = run_parity({"run", kDemo, "--ref", "--ort", "--isa", isa});
    EXPECT_EQ(r.exit_code, 0) << isa << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "PASSED")) << isa << ": " << r.output;
  }
  const auto bad = run_parity({"run", kDemo, "--ref", "--isa", "avx3"});
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_TRUE(contains(bad.output, "avx3")) << bad.output;
}

TEST(IsaOption, CappedPlanRecordsItsIsaAndRunsWithIt) {
  TempDir dir;
  const std::string plan = (dir / "demo.plan").string();
  auto r = run_parity({"convert", kDemo, "--isa", "avx2", "-o", plan});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = run_parity({"inspect", "model", plan});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string tier = runtime::kernel_isa_name(runtime::min_isa(runtime::cpu_kernel_isa(), runtime::KernelIsa::kAvx2));
  EXPECT_TRUE(contains(r.output, "parity kernels " + tier)) << r.output;
  r = run_parity({"run", plan, "--ref", "--isa", "avx2"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  if (runtime::cpu_kernel_isa() > runtime::KernelIsa::kAvx2) {
    // Uncapped, oneDNN dispatches to another ISA than the plan's packed weights were made for.
    r = run_parity({"run", plan, "--ref"});
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r.output, "was built with --isa avx2")) << r.output;
    EXPECT_TRUE(contains(r.output, "run it with --isa avx2")) << r.output;
  }
}

TEST(IsaOption, BenchNamesTheCpuAndTheIsaInTableJsonAndMarkdown) {
  TempDir dir;
  const auto r = run_parity({"bench", kDemo, "--runners", "ref", "--threads", "1", "--iterations", "2", "--min-time",
                             "0", "--warm-up", "1", "--no-ceiling", "--isa", "avx2", "--json",
                             (dir / "bench.json").string(), "--markdown", (dir / "table.md").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string tier = runtime::kernel_isa_name(runtime::min_isa(runtime::cpu_kernel_isa(), runtime::KernelIsa::kAvx2));
  const std::string machine = "ref's vector kernels " + tier + " (capped: --isa avx2)";
  EXPECT_TRUE(contains(r.output, "Machine: " + runtime::cpu_model_name())) << r.output;
  EXPECT_TRUE(contains(r.output, machine)) << r.output;
  EXPECT_TRUE(contains(read_file(dir / "table.md"), machine));
  const auto report = nlohmann::json::parse(read_file(dir / "bench.json"));
  EXPECT_EQ(report["machine"]["isa_cap"], "avx2");
  EXPECT_EQ(report["machine"]["kernel_isa"], tier);
  // The bench process capped oneDNN at start-up (this test process is not capped).
  if (!runtime::dnnl_isa_name().empty() && runtime::cpu_kernel_isa() >= runtime::KernelIsa::kAvx2)
    EXPECT_EQ(report["machine"]["dnnl_isa"], "avx2");
  EXPECT_FALSE(report["machine"]["cpu_isa_extensions"].empty());
}

}  // namespace
}  // namespace parity::testing
