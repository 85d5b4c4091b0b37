// The layer map of src/ and include/parity/ (README "Layout"): a layer includes only itself and
// the layers below it, and its code lives in its own namespace. These tests read every source file, so an upward
// include or a namespace that does not follow its folder fails here with file and line.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

// Lowest first. A layer may include headers of any layer at or before its own position.
const std::vector<std::string>& layer_order() {
  static const std::vector<std::string> kOrder = {"core",    "options", "model", "runtime",
                                                  "runners", "compare", "tools", "cli"};
  return kOrder;
}

int layer_rank(const std::string& layer) {
  const auto& order = layer_order();
  auto it = std::find(order.begin(), order.end(), layer);
  return it == order.end() ? -1 : static_cast<int>(it - order.begin());
}

// The namespace a layer's code must open: core holds the vocabulary types (Tensor, DType, Status)
// in the root namespace; every other layer has its own. Nested namespaces below these are free.
std::string layer_namespace(const std::string& layer) {
  return layer == "core" ? "parity" : "parity::" + layer;
}

struct Violation {
  std::string where;  // file:line
  std::string what;
};

std::string relative_to(const fs::path& path, const fs::path& root) {
  return fs::relative(path, root).generic_string();
}

bool is_source_file(const fs::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".h" || ext == ".cpp" || ext == ".inc" || ext == ".in";
}

/// Upward includes under `src_root`: `#include "<layer>/..."` from a file whose layer is lower.
std::vector<Violation> find_upward_includes(const fs::path& src_root) {
  static const std::regex kInclude(R"(^\s*#\s*include\s*"([A-Za-z_]+)/)");
  std::vector<Violation> found;
  for (const auto& entry : fs::recursive_directory_iterator(src_root)) {
    if (!entry.is_regular_file() || !is_source_file(entry.path())) continue;
    const std::string rel = relative_to(entry.path(), src_root);
    const std::string layer = rel.substr(0, rel.find('/'));
    const int rank = layer_rank(layer);
    if (rank < 0) continue;  // files directly in src/ (none today) belong to no layer
    std::ifstream in(entry.path());
    std::string line;
    for (int line_no = 1; std::getline(in, line); ++line_no) {
      std::smatch m;
      if (!std::regex_search(line, m, kInclude)) continue;
      const int target = layer_rank(m[1].str());
      if (target > rank)
        found.push_back({rel + ":" + std::to_string(line_no),
                         layer + " may not include " + m[1].str() + " (" + line + ")"});
    }
  }
  return found;
}

/// Namespaces opened in a layer's files that are not the layer's namespace or nested in it.
std::vector<Violation> find_foreign_namespaces(const fs::path& src_root) {
  static const std::regex kNamespace(R"(^\s*namespace\s+(parity[A-Za-z_:]*)\s*\{)");
  std::vector<Violation> found;
  for (const auto& entry : fs::recursive_directory_iterator(src_root)) {
    if (!entry.is_regular_file() || !is_source_file(entry.path())) continue;
    const std::string rel = relative_to(entry.path(), src_root);
    const std::string layer = rel.substr(0, rel.find('/'));
    if (layer_rank(layer) < 0) continue;
    const std::string expected = layer_namespace(layer);
    std::ifstream in(entry.path());
    std::string line;
    for (int line_no = 1; std::getline(in, line); ++line_no) {
      std::smatch m;
      if (!std::regex_search(line, m, kNamespace)) continue;
      const std::string ns = m[1].str();
      const bool nested_in_layer = ns == expected || ns.rfind(expected + "::", 0) == 0;
      // core's root namespace must not be used to smuggle in another layer's namespace.
      bool claims_other_layer = false;
      for (const auto& other : layer_order())
        if (other != layer && other != "core" &&
            (ns == "parity::" + other || ns.rfind("parity::" + other + "::", 0) == 0))
          claims_other_layer = true;
      if (!nested_in_layer || claims_other_layer)
        found.push_back({rel + ":" + std::to_string(line_no), "namespace " + ns + " in layer " + layer +
                                                                  " (expected " + expected + ")"});
    }
  }
  return found;
}

std::string describe(const std::vector<Violation>& violations) {
  std::ostringstream out;
  for (const auto& v : violations) out << "  " << v.where << ": " << v.what << "\n";
  return out.str();
}

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST(Layering, EveryLayerFolderExists) {
  for (const auto& layer : layer_order())
    EXPECT_TRUE(fs::is_directory(source_dir() / "src" / layer)) << "src/" << layer;
}

// The public headers (include/parity/<layer>/...) belong to their layers as much as src/'s do.
const std::vector<fs::path>& layered_roots() {
  static const std::vector<fs::path> kRoots = {source_dir() / "src", source_dir() / "include" / "parity"};
  return kRoots;
}

TEST(Layering, NoIncludeGoesUpTheLayerMap) {
  for (const auto& root : layered_roots()) {
    const auto violations = find_upward_includes(root);
    EXPECT_TRUE(violations.empty()) << violations.size() << " upward include(s) under " << root.string() << ":\n"
                                    << describe(violations);
  }
}

TEST(Layering, NamespacesFollowFolders) {
  for (const auto& root : layered_roots()) {
    const auto violations = find_foreign_namespaces(root);
    EXPECT_TRUE(violations.empty()) << violations.size() << " misplaced namespace(s) under " << root.string()
                                    << ":\n" << describe(violations);
  }
}

TEST(Layering, NoFileNamedLikeALibraryHeaderPrefix) {
  // src/onnx/ once shadowed libonnx's <onnx/...> headers; no layer folder may take a name that a
  // dependency's include prefix uses.
  for (const char* prefix : {"onnx", "google", "nlohmann", "oneapi", "opencv2", "torch", "fmt", "yaml-cpp", "re2"})
    EXPECT_FALSE(fs::exists(source_dir() / "src" / prefix)) << "src/" << prefix << " shadows a library's headers";
}

// The checks themselves must be able to fail: a tree with one forbidden edge and one misplaced
// namespace is reported, with the file and line of each.
TEST(Layering, CheckerReportsAForbiddenIncludeWithFileAndLine) {
  TempDir dir;
  write_file(dir / "model/graph.h", "#pragma once\n#include \"core/tensor.h\"\n#include \"runtime/session.h\"\n");
  write_file(dir / "cli/main.cpp", "#include \"tools/fold.h\"\n#include \"model/graph.h\"\n");
  const auto violations = find_upward_includes(dir.path());
  ASSERT_EQ(violations.size(), 1u) << describe(violations);
  EXPECT_EQ(violations[0].where, "model/graph.h:3");
  EXPECT_NE(violations[0].what.find("model may not include runtime"), std::string::npos);
}

TEST(Layering, CheckerReportsANamespaceThatDoesNotFollowItsFolder) {
  TempDir dir;
  write_file(dir / "runtime/a.cpp", "namespace parity::runtime::ops {\n}\n");
  write_file(dir / "runtime/b.cpp", "\nnamespace parity::compare {\n}\n");
  write_file(dir / "core/c.h", "namespace parity {\n}\nnamespace parity::runtime {\n}\n");
  auto violations = find_foreign_namespaces(dir.path());
  std::sort(violations.begin(), violations.end(),
            [](const Violation& a, const Violation& b) { return a.where < b.where; });
  ASSERT_EQ(violations.size(), 2u) << describe(violations);
  EXPECT_EQ(violations[0].where, "core/c.h:3");
  EXPECT_EQ(violations[1].where, "runtime/b.cpp:2");
}

}  // namespace
}  // namespace parity::testing
