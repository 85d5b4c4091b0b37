// A command file parses its options into typed structs and calls one library entry point, so it
// stays short: the work it names lives in the library, where API users can call it too.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxCommandFileLines = 200;

size_t line_count(const fs::path& path) {
  std::ifstream in(path);
  size_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

// "file: N lines" for every file of `dir` longer than `limit` lines.
std::vector<std::string> files_over(const fs::path& dir, size_t limit) {
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    if (const size_t lines = line_count(entry.path()); lines > limit)
      found.push_back(entry.path().filename().string() + ": " + std::to_string(lines) + " lines");
  }
  return found;
}

TEST(ThinCommands, NoCommandFileIsOver200Lines) {
  const fs::path commands = source_dir() / "src" / "cli" / "commands";
  ASSERT_TRUE(fs::is_directory(commands)) << commands;
  for (const auto& file : files_over(commands, kMaxCommandFileLines))
    ADD_FAILURE() << file << " (move the work into the library; the command parses and calls it)";
}

TEST(ThinCommands, CheckerCountsLinesOfALongFile) {
  const fs::path dir = fs::temp_directory_path() / "parity_thin_commands_test";
  fs::create_directories(dir);
  {
    std::ofstream(dir / "short.cpp") << "int a;\n";
    std::ofstream out(dir / "long.cpp");
    for (int i = 0; i < 3; ++i) out << "int b" << i << ";\n";
  }
  EXPECT_EQ(files_over(dir, 2), std::vector<std::string>{"long.cpp: 3 lines"});
  EXPECT_TRUE(files_over(dir, 3).empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace parity::testing
