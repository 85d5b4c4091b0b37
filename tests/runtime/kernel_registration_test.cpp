// The registration macros: one line registers a kernel class at every since-version it lists.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "runtime/kernel.h"
#include "support/test_support.h"

namespace parity::runtime {
namespace {

constexpr const char* kDomain = "test.registration";

class NoOpKernel : public Kernel {
 public:
  explicit NoOpKernel(const KernelInit&) {}
  void compute(KernelContext&) const override {}
};

// A class name with a comma in it must pass through the macro untouched.
template <typename A, typename B>
class PairKernel : public NoOpKernel {
 public:
  using NoOpKernel::NoOpKernel;
};

PARITY_REGISTER_KERNEL(kDomain, "Listed", (1, 7, 13), NoOpKernel);
PARITY_REGISTER_KERNEL(kDomain, "Single", 5, NoOpKernel);
PARITY_REGISTER_KERNEL(kDomain, "Pair", (2, 3), PairKernel<int, float>);

static_assert(valid_since_versions({1, 7, 13}));
static_assert(valid_since_versions({4}));
static_assert(!valid_since_versions({}), "an empty list registers nothing");
static_assert(!valid_since_versions({0}), "opset versions start at 1");
static_assert(!valid_since_versions({7, 7}), "a version listed twice");
static_assert(!valid_since_versions({13, 7}), "versions out of order");

TEST(KernelRegistration, ListRegistersEveryVersion) {
  const auto& registry = KernelRegistry::instance();
  EXPECT_EQ(registry.versions(kDomain, "Listed"), (std::vector<int>{1, 7, 13}));
  EXPECT_EQ(registry.versions(kDomain, "Single"), (std::vector<int>{5}));
  EXPECT_EQ(registry.versions(kDomain, "Pair"), (std::vector<int>{2, 3}));
  const KernelDef* def = registry.resolve(kDomain, "Listed", 12);
  ASSERT_NE(def, nullptr);
  EXPECT_EQ(def->since_version, 7);
  EXPECT_NE(def->source_file.find("kernel_registration_test.cpp"), std::string::npos);
  EXPECT_EQ(registry.resolve(kDomain, "Single", 4), nullptr);
}

TEST(KernelRegistration, OpFilesRegisterEachVersionOfTheirClass) {
  // Relu: one registration line per tier lists its since-versions (the optimized tier from 6).
  const auto& registry = KernelRegistry::instance();
  EXPECT_EQ(registry.versions("", "Relu"), (std::vector<int>{1, 6, 13, 14}));
  const KernelDef* reference = registry.resolve("", "Relu", 13);
  ASSERT_NE(reference, nullptr);
  const KernelDef* optimized = registry.resolve_optimized(*reference, 13);
  ASSERT_NE(optimized, nullptr);
  EXPECT_EQ(optimized->since_version, 13);
}

// Op files (src/runtime/ops): where each registration comes from, relative to src/runtime/ops.
std::map<std::string, std::vector<const KernelDef*>> registrations_by_op_file() {
  std::map<std::string, std::vector<const KernelDef*>> files;
  const std::string marker = "src/runtime/ops/";
  for (const KernelDef& def : KernelRegistry::instance().all()) {
    const auto pos = def.source_file.find(marker);
    if (pos != std::string::npos) files[def.source_file.substr(pos + marker.size())].push_back(&def);
  }
  return files;
}

/// The op's page under https://onnx.ai/onnx/operators/, or "" for a domain without one.
std::string spec_page(const KernelDef& def) {
  if (def.domain.empty()) return "onnx__" + def.op_type + ".html";
  if (def.domain == "ai.onnx.ml") return "onnx_aionnxml_" + def.op_type + ".html";
  if (def.domain == "ai.onnx.preview.training") return "onnx_aionnxpreviewtraining_" + def.op_type + ".html";
  return "";
}

/// The file's leading "// Spec: ..." line and its "//       ..." continuation lines.
std::string spec_block(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string block, line;
  while (std::getline(in, line)) {
    const bool first = block.empty() && line.rfind("// Spec: ", 0) == 0;
    if (!first && !(!block.empty() && line.rfind("//       ", 0) == 0)) break;
    block += line + "\n";
  }
  return block;
}

TEST(OpFiles, EveryOpFileStartsWithItsSpecLinks) {
  const auto files = registrations_by_op_file();
  ASSERT_GT(files.size(), 50u);
  for (const auto& [file, defs] : files) {
    SCOPED_TRACE(file);
    const std::string block = spec_block(testing::source_dir() / "src" / "runtime" / "ops" / file);
    ASSERT_FALSE(block.empty()) << "the file must start with \"// Spec: https://onnx.ai/onnx/operators/...\"";
    bool any_page = false;
    for (const KernelDef* def : defs) {
      const std::string page = spec_page(*def);
      if (page.empty()) continue;
      any_page = true;
      EXPECT_NE(block.find(page), std::string::npos) << def->op_type << ": " << page << " missing from\n" << block;
    }
    const std::string expected_start = any_page ? "// Spec: https://onnx.ai/onnx/operators/" : "// Spec: none (";
    EXPECT_EQ(block.rfind(expected_start, 0), 0u) << block;
  }
}

// Optimized kernels live in <name>_dnnl.cpp (oneDNN) or <name>_fast.cpp (parity's own loops), and
// only there; helpers of a variant follow the same suffix (elementwise_fast_avx2.cpp).
TEST(OpFiles, OptimizedKernelsLiveInVariantFiles) {
  const std::regex variant_file(R"((.*/)?[a-z0-9]+(_[a-z0-9]+)*_(dnnl|fast)(_[a-z0-9]+)*\.(cpp|h|inc))");
  for (const auto& [file, defs] : registrations_by_op_file())
    for (const KernelDef* def : defs)
      EXPECT_EQ(def->tier == KernelTier::kOptimized, std::regex_match(file, variant_file))
          << file << " registers " << def->op_type << (def->tier == KernelTier::kOptimized ? " (optimized)" : "");
  const std::regex old_style(R"((optimized|dnnl|fast|small)_.*)");
  for (const auto& entry : std::filesystem::recursive_directory_iterator(testing::source_dir() / "src/runtime/ops")) {
    const std::string name = entry.path().filename().string();
    EXPECT_FALSE(std::regex_match(name, old_style)) << entry.path() << ": name variants <op>_dnnl / <op>_fast";
  }
}

}  // namespace
}  // namespace parity::runtime
