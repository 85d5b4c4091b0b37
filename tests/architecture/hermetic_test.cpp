// Tests and set-up read only what the checkout holds or its own set-up installs: a fresh clone
// anywhere, on any machine, runs the same suite. A folder beside the checkout or a path on the
// machine that wrote a test would make the suite pass there and nowhere else.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

// Spellings that reach outside the checkout: the folder beside it and machine-local roots.
constexpr std::array<std::string_view, 3> kOutsideReferences = {"../shared", "/work/", "PARITY_SHARED_DIR"};

bool is_text_source(const fs::path& path) {
  static const std::array<std::string_view, 11> kExtensions = {".cpp", ".h",   ".inc", ".cc",  ".py", ".sh",
                                                               ".cmake", ".txt", ".in",  ".yaml", ".md"};
  const std::string ext = path.extension().string();
  for (const auto known : kExtensions)
    if (ext == known) return true;
  const std::string name = path.filename().string();
  return name == "Makefile" || name == "run";
}

// "file:line: reference" for every line of the text files under `root` that names one of `needles`.
std::vector<std::string> outside_references(const fs::path& root, const fs::path& base,
                                            const std::vector<std::string_view>& needles) {
  std::vector<std::string> found;
  if (!fs::exists(root)) return found;
  auto scan = [&](const fs::path& file) {
    std::ifstream in(file);
    int number = 0;
    for (std::string line; std::getline(in, line);) {
      ++number;
      for (const auto needle : needles)
        if (line.find(needle) != std::string::npos)
          found.push_back(fs::relative(file, base).string() + ":" + std::to_string(number) + ": " + std::string(needle));
    }
  };
  if (fs::is_regular_file(root)) {
    scan(root);
    return found;
  }
  for (const auto& entry : fs::recursive_directory_iterator(root))
    if (entry.is_regular_file() && is_text_source(entry.path())) scan(entry.path());
  return found;
}

TEST(Hermetic, NothingReadsBesideTheCheckoutOrAMachinePath) {
  const fs::path source = source_dir();
  const std::vector<std::string_view> needles(kOutsideReferences.begin(), kOutsideReferences.end());
  // This file names the spellings it looks for, so it is the one file not scanned.
  const fs::path self = source / "tests" / "architecture" / "hermetic_test.cpp";
  for (const char* part : {"src", "include", "tests", "scripts", "python", "examples", "cmake", "bench", "fuzz",
                           "CMakeLists.txt", "Makefile", ".ci/run"}) {
    for (const auto& hit : outside_references(source / part, source, needles)) {
      if (hit.rfind(fs::relative(self, source).string() + ":", 0) == 0) continue;
      ADD_FAILURE() << hit << " (copy the data into tests/data or make it in scripts/setup.sh)";
    }
  }
}

TEST(Hermetic, CheckerFindsAReferenceWithFileAndLine) {
  const fs::path dir = fs::temp_directory_path() / "parity_hermetic_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "a.cpp") << "int a;\nconst char* p = \"../shared/x\";\n";
  std::ofstream(dir / "b.bin") << "../shared\n";
  EXPECT_EQ(outside_references(dir, dir, {"../shared"}), std::vector<std::string>{"a.cpp:2: ../shared"});
  fs::remove_all(dir);
}

}  // namespace
}  // namespace parity::testing
