#include "support/test_support.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdlib>
#include <optional>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include "core/status.h"
#include "runners/registry.h"
#include "support/require.h"

namespace parity::testing {

namespace fs = std::filesystem;

TempDir::TempDir() {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    fs::path p = fs::temp_directory_path() / ("parity-test-" + std::to_string(rd()));
    if (fs::create_directory(p)) {
      path_ = p;
      return;
    }
  }
  throw std::runtime_error("cannot create a temporary directory");
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string CommandResult::last_line() const {
  std::istringstream in(output);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

static std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

CommandResult run_shell(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) result.output.append(buf.data(), n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string failing_runners_extension() {
  return std::string(PARITY_TEST_EXTENSION_DIR) + "/failing_runners/libparity_failing_runners.so";
}



CommandResult run_parity(const std::vector<std::string>& args) {
  std::string cmd = shell_quote(PARITY_BINARY);
  for (const auto& a : args) cmd += " " + shell_quote(a);
  return run_shell(cmd);
}

CommandResult run_with_failing_runners(const std::vector<std::string>& args) {
  std::string cmd = "PARITY_EXTENSION_PATH=" + shell_quote(failing_runners_extension()) + " " + shell_quote(PARITY_BINARY);
  for (const auto& a : args) cmd += " " + shell_quote(a);
  return run_shell(cmd);
}

runtime::KernelIsa test_kernel_isa() {
  static const runtime::KernelIsa isa = [] {
    const char* cap = std::getenv("PARITY_TEST_KERNEL_ISA");
    const std::optional<runtime::KernelIsa> parsed = cap && *cap ? runtime::parse_kernel_isa(cap) : std::nullopt;
    if (cap && *cap && !parsed) ADD_FAILURE() << "$PARITY_TEST_KERNEL_ISA must be native, avx512, avx2 or baseline";
    return parsed ? runtime::min_isa(runtime::cpu_kernel_isa(), *parsed) : runtime::cpu_kernel_isa();
  }();
  return isa;
}

std::vector<runtime::KernelIsa> tested_kernel_isas() {
  std::vector<runtime::KernelIsa> tiers;
  for (runtime::KernelIsa isa : {runtime::KernelIsa::kAvx512, runtime::KernelIsa::kAvx2, runtime::KernelIsa::kBaseline})
    if (isa <= test_kernel_isa()) tiers.push_back(isa);
  return tiers;
}

fs::path source_dir() { return PARITY_SOURCE_DIR; }
fs::path polygraphy_fixtures_dir() { return fs::path(PARITY_SOURCE_DIR) / "tests" / "data" / "polygraphy_files"; }
fs::path modern_models_dir() { return fs::path(PARITY_SOURCE_DIR) / "tests" / "data" / "modern_models"; }
fs::path onnx_testdata_dir() { return PARITY_ONNX_TESTDATA; }

int for_each_onnx_node_test(const std::function<void(const fs::path& test_dir)>& visit) {
  int tests = 0;
  for (const fs::path& suite : {onnx_testdata_dir() / "node", source_dir() / ".cache/onnx-testdata-1.23/node"}) {
    if (!fs::exists(suite)) {
      if (std::getenv("CI")) ADD_FAILURE() << suite << " is missing; run scripts/setup.sh";
      continue;
    }
    for (const auto& entry : fs::directory_iterator(suite)) {
      if (!fs::exists(entry.path() / "model.onnx")) continue;
      ++tests;
      visit(entry.path());
    }
  }
  return tests;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const fs::path& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
}

bool in_ci() {
  const char* ci = std::getenv("CI");
  return ci && std::string(ci) == "true";
}

std::string runner_unavailable_reason(const std::string& name) {
  const runners::RunnerInfo* info = runners::RunnerRegistry::instance().find(name);
  if (!info) return "parity was built without the '" + name + "' runner";
  if (!info->availability) return "";
  const Status status = info->availability({});
  return status.is_ok() ? "" : status.message();
}

std::string missing_file_reason(const fs::path& path) { return path.string() + " missing (run scripts/setup.sh)"; }

std::string user_error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_FALSE(e.is_internal()) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

}  // namespace parity::testing
