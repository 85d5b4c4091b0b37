// Library code below the CLI reads its options as typed structs (options::Group<T>), never through
// the argument parser's string-keyed Args, where a misspelt dest silently reads as absent. The
// files that still do are listed here; the list may only shrink: a new file fails, and so does a
// listed file that no longer needs its entry.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

// Where the parser lives and where it is used: the only folders that may see Args.
bool parser_folder(const std::string& relative) {
  return relative.rfind("cli/", 0) == 0 || relative.rfind("options/", 0) == 0;
}

// Files below the CLI that still take options::Args: the runner-selection group (one flag per
// registered runner, which the registry defines) and `run --gen-script`, which turns the whole
// command line into a program.
const std::set<std::string>& still_untyped() {
  static const std::set<std::string> kFiles = {
      "runners/runner_args.cpp",
      "runners/runner_args.h",
      "tools/run_script.cpp",
      "tools/run_script.h",
  };
  return kFiles;
}

// A line that names the parser's Args or looks an option up by its dest string.
bool untyped_option_use(const std::string& line) {
  static const std::regex kUse(
      R"(options::Args\b|\b\w*args\w*\s*(\.|->)\s*(get|get_or|list|has|flag|count|get_int|get_double)\(\s*")");
  return std::regex_search(line, kUse);
}

// file (relative to src/) -> first offending line, for every file below the parser's folders.
std::vector<std::pair<std::string, std::string>> untyped_files(const fs::path& src) {
  std::vector<std::pair<std::string, std::string>> found;
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    if (!entry.is_regular_file()) continue;
    const std::string ext = entry.path().extension().string();
    if (ext != ".h" && ext != ".cpp") continue;
    const std::string relative = fs::relative(entry.path(), src).generic_string();
    if (parser_folder(relative)) continue;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);)
      if (untyped_option_use(line)) {
        found.emplace_back(relative, line);
        break;
      }
  }
  std::sort(found.begin(), found.end());
  return found;
}

TEST(TypedOptions, NoNewFileBelowTheCliReadsArgs) {
  const fs::path src = source_dir() / "src";
  ASSERT_TRUE(fs::is_directory(src)) << src;
  std::set<std::string> seen;
  for (const auto& [file, line] : untyped_files(src)) {
    seen.insert(file);
    if (!still_untyped().count(file))
      ADD_FAILURE() << "src/" << file << " reads options untyped: `" << line
                    << "` (define an options::Group<T> and take the T; only src/cli parses)";
  }
  for (const auto& file : still_untyped())
    if (!seen.count(file))
      ADD_FAILURE() << "src/" << file << " no longer reads Args: remove it from still_untyped()";
}

TEST(TypedOptions, TheMatcherSeesArgsAndDestLookups) {
  EXPECT_TRUE(untyped_option_use("void f(const options::Args& args);"));
  EXPECT_TRUE(untyped_option_use("  if (auto v = args.get(\"seed\")) {"));
  EXPECT_TRUE(untyped_option_use("  return config.args->get_or(\"ort_library\", \"\");"));
  EXPECT_TRUE(untyped_option_use("  const bool b = runner_args.flag(\"fp16\");"));
  EXPECT_FALSE(untyped_option_use("  const Settings s = group.parse(args);"));
  EXPECT_FALSE(untyped_option_use("  options.get(\"x\");  // a PerOutput, not Args"));
}

}  // namespace
}  // namespace parity::testing
