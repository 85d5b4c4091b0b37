// The runtime reads no environment and asks the CPU what it supports in one place: kernels take
// their switches from SessionOptions::kernel_options and their vector tier from the session's
// effective KernelIsa (runtime/cpu_isa.h), so a test or a --isa cap can run every variant.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

/// "file:line: text" for each line of a source file under src/runtime containing `needle`,
/// except in the files of `allowed` (paths relative to src/).
std::vector<std::string> runtime_lines_containing(const std::string& needle, const std::set<std::string>& allowed) {
  const fs::path src = source_dir() / "src";
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(src / "runtime")) {
    if (!entry.is_regular_file()) continue;
    const std::string ext = entry.path().extension().string();
    if (ext != ".h" && ext != ".cpp") continue;
    const std::string rel = fs::relative(entry.path(), src).generic_string();
    if (allowed.count(rel)) continue;
    std::ifstream in(entry.path());
    std::string line;
    for (int line_no = 1; std::getline(in, line); ++line_no)
      if (line.find(needle) != std::string::npos) found.push_back(rel + ":" + std::to_string(line_no) + ": " + line);
  }
  return found;
}

std::string lines(const std::vector<std::string>& found) {
  std::string out;
  for (const auto& f : found) out += "  " + f + "\n";
  return out;
}

TEST(KernelDispatch, RuntimeReadsNoEnvironment) {
  const auto found = runtime_lines_containing("getenv", {});
  EXPECT_TRUE(found.empty()) << "switches belong in SessionOptions::kernel_options:\n" << lines(found);
}

TEST(KernelDispatch, OnlyCpuIsaAsksTheCpu) {
  // reduced_precision.cpp's conversions (F16C rounding, int8 quantization) give the same bits on
  // every path for finite values, so which one runs is not a kernel choice.
  const auto found =
      runtime_lines_containing("__builtin_cpu_supports", {"runtime/cpu_isa.cpp", "runtime/reduced_precision.cpp"});
  EXPECT_TRUE(found.empty()) << "kernels dispatch on their KernelIsa (runtime/kernel_preferences.h kernel_isa):\n"
                             << lines(found);
}

}  // namespace
}  // namespace parity::testing
