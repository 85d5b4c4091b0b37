// `parity --version`: the build, the CPU and what dispatch picks, the libraries' and every peer
// runtime's versions, each checked against what the system itself says (git, /proc/cpuinfo, dpkg,
// the ONNX Runtime that setup.sh installed).
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "runners/registry.h"
#include "support/test_support.h"
#include "tools/version_report.h"

namespace parity::testing {
namespace {

// The "  key  value" lines of the report, keyed by key ("revision", "onnx", "runner ort").
std::map<std::string, std::string> report_lines(const std::string& output) {
  std::map<std::string, std::string> lines;
  std::istringstream in(output);
  std::string line;
  bool in_runners = false;
  static const std::regex kLine(R"(^  ( *)(\S+) +(.*)$)");
  while (std::getline(in, line)) {
    if (line == "  runners:") {
      in_runners = true;
      continue;
    }
    std::smatch m;
    if (!std::regex_match(line, m, kLine)) continue;
    lines[(in_runners && !m[1].str().empty() ? "runner " : "") + m[2].str()] = m[3].str();
  }
  return lines;
}

std::string trimmed_output(const std::string& command) {
  std::string out = run_shell(command).output;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// The upstream part of an installed Debian package's version ("2.6.3-1" -> "2.6.3").
std::string debian_upstream_version(const std::string& package) {
  const std::string v = trimmed_output("dpkg-query -W -f='${Version}' " + package + " 2>/dev/null");
  return v.substr(0, v.find_first_of("-+~"));
}

std::string cpuinfo_flags() {
  const std::string flags = trimmed_output("grep -m1 '^flags' /proc/cpuinfo");
  return flags + " ";
}

TEST(CliVersion, ReportsBuildCpuLibrariesAndRunners) {
  const CommandResult r = run_parity({"--version"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.rfind("parity | Version: 0.1.0 | Path: ['", 0), 0u) << r.output;
  const auto lines = report_lines(r.output);

  const std::string head = trimmed_output("git -C '" + source_dir().string() + "' rev-parse --short=12 HEAD");
  ASSERT_EQ(head.size(), 12u) << head;
  EXPECT_TRUE(lines.at("revision") == head || lines.at("revision") == head + "-dirty") << r.output;
  EXPECT_TRUE(std::regex_search(lines.at("compiler"), std::regex(R"(^(GCC|Clang) \d+\.\d+\.\d+, C\+\+20, \w+)")))
      << r.output;

  // Every extension the report names is one /proc/cpuinfo lists, in the kernel's spelling.
  static const std::map<std::string, std::string> kCpuinfoSpelling = {
      {"sse4.2", "sse4_2"},        {"avx512vnni", "avx512_vnni"}, {"avx512bf16", "avx512_bf16"},
      {"avx512fp16", "avx512_fp16"}, {"amx-tile", "amx_tile"},     {"amx-int8", "amx_int8"},
      {"amx-bf16", "amx_bf16"}};
  const std::string flags = cpuinfo_flags();
  std::istringstream isa(lines.at("isa"));
  int extensions = 0;
  for (std::string name; isa >> name; ++extensions) {
    const auto spelling = kCpuinfoSpelling.find(name);
    const std::string flag = spelling == kCpuinfoSpelling.end() ? name : spelling->second;
    EXPECT_NE(flags.find(" " + flag + " "), std::string::npos) << name << " is not in " << flags;
  }
  EXPECT_GT(extensions, 0) << r.output;
  const bool avx512 = flags.find(" avx512f ") != std::string::npos;
  EXPECT_EQ(lines.at("isa").find("avx512f") != std::string::npos, avx512) << r.output;
  const std::string tier = avx512 ? "avx512" : flags.find(" avx2 ") != std::string::npos ? "avx2" : "baseline";
  EXPECT_EQ(lines.at("dispatch").rfind("parity kernels " + tier + ", oneDNN ", 0), 0u) << r.output;

  EXPECT_EQ(lines.at("onnx").rfind("1.17.0 (IR 10, ai.onnx opsets up to ", 0), 0u) << r.output;
  EXPECT_EQ(lines.at("onednn"), debian_upstream_version("libdnnl2")) << r.output;
  EXPECT_EQ(lines.at("protobuf").rfind(debian_upstream_version("libprotobuf32") + " (", 0), 0u) << r.output;
  EXPECT_NE(lines.at("protobuf").find("libprotobuf.so.32"), std::string::npos) << r.output;

  // Every runner this build registers, in registration order, with a version or a reason.
  for (const auto& info : runners::RunnerRegistry::instance().all()) {
    ASSERT_TRUE(lines.count("runner " + info.name)) << info.name << " missing in\n" << r.output;
    EXPECT_FALSE(lines.at("runner " + info.name).empty()) << r.output;
  }
  const std::string ort_version = trimmed_output("cat '" + (source_dir() / ".cache/ort/lib/VERSION").string() + "'");
  EXPECT_EQ(lines.at("runner ort").rfind(ort_version + " (providers: ", 0), 0u) << r.output;
  EXPECT_NE(lines.at("runner ort").find("libonnxruntime.so.1"), std::string::npos) << r.output;
  if (lines.count("runner opencv"))
    EXPECT_EQ(lines.at("runner opencv"), debian_upstream_version("libopencv-dnn406")) << r.output;
  // LibTorch's version is its headers' (TORCH_VERSION): Debian's 1.13.1 says 1.13.0.
  if (lines.count("runner torch")) {
    const std::string debian = debian_upstream_version("libtorch1.13");
    EXPECT_EQ(lines.at("runner torch").substr(0, 5), debian.substr(0, 5)) << r.output;
  }
}

TEST(CliVersion, SaysWhyARuntimeIsUnavailable) {
  const CommandResult r = run_shell("PARITY_ORT_LIBRARY=/nonexistent/libonnxruntime.so.1 '" +
                                    std::string(PARITY_BINARY) + "' --version");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string ort = report_lines(r.output).at("runner ort");
  EXPECT_EQ(ort.rfind("unavailable: cannot load ONNX Runtime from $PARITY_ORT_LIBRARY (/nonexistent/", 0), 0u)
      << r.output;
}

TEST(CliVersion, DispatchFollowsOneDnnsIsaCap) {
  const CommandResult r = run_shell("ONEDNN_MAX_CPU_ISA=AVX2 '" + std::string(PARITY_BINARY) + "' --version");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string dispatch = report_lines(r.output).at("dispatch");
  EXPECT_NE(dispatch.find(", oneDNN avx2 (ONEDNN_MAX_CPU_ISA=AVX2)"), std::string::npos) << r.output;
}

TEST(VersionReport, UnavailableComponentsSayWhy) {
  tools::VersionReport report;
  report.parity_version = "9.9.9";
  report.revision = "unknown";
  report.compiler = "GCC 1.2.3, C++20";
  report.build_type = "Debug";
  report.kernel_tier = "baseline";
  report.libraries.push_back({.name = "onednn", .available = false, .detail = "no oneDNN in this build"});
  report.runners.push_back({.name = "ort", .available = true, .version = "1.30.0", .detail = "library: x.so"});
  report.runners.push_back({.name = "torch", .available = false, .detail = "libtorch missing"});
  const std::string text = tools::format_version_report(report);
  EXPECT_EQ(text.rfind("parity | Version: 9.9.9 | Path: ['?']\n", 0), 0u) << text;
  const auto lines = report_lines(text);
  EXPECT_EQ(lines.at("compiler"), "GCC 1.2.3, C++20, Debug");
  EXPECT_EQ(lines.at("cpu"), "unknown");
  EXPECT_EQ(lines.at("isa"), "(none detected)");
  EXPECT_EQ(lines.at("dispatch"), "parity kernels baseline");
  EXPECT_EQ(lines.at("onednn"), "unavailable: no oneDNN in this build");
  EXPECT_EQ(lines.at("runner ort"), "1.30.0 (library: x.so)");
  EXPECT_EQ(lines.at("runner torch"), "unavailable: libtorch missing");
}

}  // namespace
}  // namespace parity::testing
