// Lists the ONNX operators (default domain, opset <= 17, as libonnx 1.12 knows them) that have no
// registered kernel, and fails if that number grows beyond tests/runtime/missing_kernels_baseline.txt.
//
// Counted: every non-deprecated default-domain schema. Operators whose schema has a function body
// still count as missing when no kernel exists (the executor can inline them, but the goal is a
// reference kernel per operator); they are marked "(function)" in the list.
#include <gtest/gtest.h>
#include <onnx/defs/schema.h>

#include <fstream>
#include <map>
#include <set>

#include "runtime/kernel.h"
#include "support/test_support.h"

namespace parity::runtime {
namespace {

constexpr int kMaxOpset = 17;

TEST(KernelCoverage, ListsSchemasWithoutKernel) {
  std::map<std::string, std::set<int>> versions;  // op -> since_versions <= 17
  std::map<std::string, bool> has_function;
  std::set<std::string> deprecated;
  for (const auto& schema : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
    if (schema.domain() != "" && schema.domain() != "ai.onnx") continue;
    if (schema.since_version() > kMaxOpset) continue;
    if (schema.Deprecated()) {
      deprecated.insert(schema.Name());
      continue;
    }
    versions[schema.Name()].insert(schema.since_version());
    has_function[schema.Name()] = has_function[schema.Name()] || schema.HasFunction() ||
                                  schema.HasContextDependentFunction();
  }
  // An op is covered when its latest version <= 17 resolves to a kernel registered for that version
  // or later (every older version then resolves too, as kernels register each version they handle).
  std::vector<std::string> missing, outdated;
  const auto& registry = KernelRegistry::instance();
  for (const auto& [op, vs] : versions) {
    if (deprecated.count(op) && vs.empty()) continue;
    const int latest = *vs.rbegin();
    const KernelDef* def = registry.resolve("", op, latest);
    if (!def) missing.push_back(op + (has_function[op] ? " (function)" : ""));
    else if (def->since_version < latest)
      outdated.push_back(op + " (kernel v" + std::to_string(def->since_version) + ", schema v" +
                         std::to_string(latest) + ")");
  }
  std::printf("%zu of %zu default-domain operators (opset <= %d) have no kernel:\n", missing.size(), versions.size(),
              kMaxOpset);
  for (const auto& m : missing) std::printf("  %s\n", m.c_str());
  if (!outdated.empty()) {
    // Informational: a kernel registered at an older since_version serves newer versions whose
    // semantics only widened the types, so these are not counted as missing.
    std::printf("%zu operators resolve to a kernel registered before their latest schema version:\n", outdated.size());
    for (const auto& m : outdated) std::printf("  %s\n", m.c_str());
  }
  std::ifstream in(testing::source_dir() / "tests/runtime/missing_kernels_baseline.txt");
  int allowed = -1;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#') allowed = std::stoi(line);
  ASSERT_GE(allowed, 0) << "missing_kernels_baseline.txt has no number";
  EXPECT_LE(static_cast<int>(missing.size()), allowed)
      << "more operators lack a kernel than the recorded baseline";
}

}  // namespace
}  // namespace parity::runtime
