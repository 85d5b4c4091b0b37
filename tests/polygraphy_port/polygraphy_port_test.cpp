// Polygraphy's own CLI tests (tests/tools/test_*.py of Polygraphy 0.49, backend-agnostic cases), ported
// case by case: each case of tests/data/polygraphy_port/cases_*.yaml types Polygraphy's command lines
// with `polygraphy` replaced by parity, in a scratch folder, and checks that test's assertions. A case
// marked `expected_difference` checks parity's deliberate behaviour instead, so the list cannot rot.
// The format is described in docs/polygraphy-port.md.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "polygraphy_port/polygraphy_port_checks.h"
#include "support/test_support.h"

namespace parity::testing::polygraphy_port {
namespace {

namespace fs = std::filesystem;

fs::path port_dir() { return source_dir() / "tests" / "data" / "polygraphy_port"; }

struct PortedCase {
  std::string file;  // cases_*.yaml it comes from
  YAML::Node node;
  std::string id() const { return node["id"].as<std::string>(); }
};

std::vector<PortedCase> load_cases() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(port_dir()))
    if (entry.path().filename().string().rfind("cases_", 0) == 0 && entry.path().extension() == ".yaml")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<PortedCase> cases;
  for (const auto& file : files)
    for (const auto& node : YAML::LoadFile(file.string())) cases.push_back({file.filename().string(), node});
  return cases;
}

const std::vector<PortedCase>& all_cases() {
  static const std::vector<PortedCase> cases = load_cases();
  return cases;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct StepResult {
  int exit_code = -1;
  std::string out, err;
};

// Runs parity with the step's arguments in `cwd`, stdout and stderr kept apart (Polygraphy's tests
// read status.stdout alone for some assertions).
StepResult run_step(const std::vector<std::string>& args, const fs::path& cwd, const fs::path& scratch,
                    const std::string& stdin_text) {
  const fs::path out = scratch / ".step.stdout", err = scratch / ".step.stderr", in = scratch / ".step.stdin";
  write_file(in, stdin_text);
  std::string command = "cd " + shell_quote(cwd.string()) + " && PARITY_BIN=" + shell_quote(PARITY_BINARY) + " " +
                        shell_quote(PARITY_BINARY);
  for (const auto& a : args) command += " " + shell_quote(a);
  command += " <" + shell_quote(in.string()) + " >" + shell_quote(out.string()) + " 2>" + shell_quote(err.string());
  const int status = std::system(command.c_str());
  StepResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string rstrip(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

std::string strip(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t");
  return begin == std::string::npos ? "" : rstrip(s.substr(begin));
}

// Polygraphy's check_lines_match on stdout without its first line: lines with "Loading" and [V]/[W]
// lines dropped, the rest compared line by line (right-stripped), skipping expected lines with `skip`.
void check_golden(const std::string& stdout_text, const std::string& expected, const std::string& skip,
                  std::vector<std::string>& failures) {
  std::vector<std::string> actual;
  const auto lines = split_lines(stdout_text);
  for (size_t i = 1; i < lines.size(); ++i)
    if (lines[i].find("Loading") == std::string::npos && lines[i].rfind("[V]", 0) != 0 && lines[i].rfind("[W]", 0) != 0)
      actual.push_back(rstrip(lines[i]));
  auto wanted = split_lines(rstrip(expected));
  if (actual.size() != wanted.size())
    return failures.push_back("golden: " + std::to_string(actual.size()) + " lines where Polygraphy prints " +
                              std::to_string(wanted.size()));
  for (size_t i = 0; i < wanted.size(); ++i)
    if ((skip.empty() || wanted[i].find(skip) == std::string::npos) && actual[i] != rstrip(wanted[i]))
      failures.push_back("golden line " + std::to_string(i + 1) + ": '" + actual[i] + "' where Polygraphy prints '" +
                         rstrip(wanted[i]) + "'");
}

// TestInspectData::test_num_items: every printed array line (indented two tabs) holds `expected` items.
void check_array_items(const std::string& stdout_text, int expected, std::vector<std::string>& failures) {
  int lines = 0;
  for (const auto& line : split_lines(stdout_text)) {
    const std::string s = strip(line);
    if (s.empty() || line.rfind("        ", 0) != 0 || s == "...") continue;
    ++lines;
    std::string body = s;
    body.erase(0, body.find_first_not_of('['));
    body.erase(body.find_last_not_of(']') + 1);
    std::istringstream in(body);
    int items = 0;
    for (std::string item; in >> item;) items += item.find("...") == std::string::npos;
    if (items != expected)
      failures.push_back("array line '" + s + "' holds " + std::to_string(items) + " items, not " + std::to_string(expected));
  }
  if (lines == 0) failures.push_back("no array lines printed");
}

void check_texts(const YAML::Node& list, const std::string& text, bool present, const std::string& where,
                 std::vector<std::string>& failures) {
  if (!list) return;
  for (const auto& item : list) {
    const std::string part = item.as<std::string>();
    if ((text.find(part) != std::string::npos) != present)
      failures.push_back(where + (present ? " lacks '" : " has '") + part + "'");
  }
}

// The file a step writes with -o/--output (for was_shape_inference_run).
fs::path output_of(const std::vector<std::string>& args, const fs::path& cwd) {
  for (size_t i = 0; i < args.size(); ++i) {
    if ((args[i] == "-o" || args[i] == "--output") && i + 1 < args.size()) return cwd / args[i + 1];
    if (args[i].rfind("--output=", 0) == 0) return cwd / args[i].substr(9);
  }
  return {};
}

void check_step(const YAML::Node& step, const std::vector<std::string>& args, const StepResult& r, const fs::path& cwd,
                std::vector<std::string>& failures) {
  const std::string both = r.out + r.err;
  const std::string exit = step["exit"] ? step["exit"].as<std::string>() : "0";
  if (exit == "fail" ? r.exit_code == 0 : r.exit_code != std::stoi(exit))
    failures.push_back("exit code " + std::to_string(r.exit_code) + " (expected " + exit + ")");
  check_texts(step["output_has"], both, true, "output", failures);
  check_texts(step["output_lacks"], both, false, "output", failures);
  check_texts(step["stdout_has"], r.out, true, "stdout", failures);
  check_texts(step["stdout_lacks"], r.out, false, "stdout", failures);
  if (step["stdout_matches"]) {
    std::string flat = strip(r.out);
    std::replace(flat.begin(), flat.end(), '\n', ' ');
    if (!std::regex_search(flat, std::regex(step["stdout_matches"].as<std::string>())))
      failures.push_back("stdout '" + flat + "' does not match " + step["stdout_matches"].as<std::string>());
  }
  if (step["golden"])
    check_golden(r.out, step["golden"].as<std::string>(), step["golden_skip"] ? step["golden_skip"].as<std::string>() : "",
                 failures);
  if (step["array_line_items"]) check_array_items(r.out, step["array_line_items"].as<int>(), failures);
  if (step["shape_inference_run"] &&
      shape_inference_was_run(both, output_of(args, cwd)) != step["shape_inference_run"].as<bool>())
    failures.push_back(std::string("shape inference was ") + (step["shape_inference_run"].as<bool>() ? "not " : "") + "run");
}

void run_setup(const YAML::Node& setup, const fs::path& scratch) {
  for (const auto& item : setup) {
    if (item["mkdir"]) fs::create_directories(scratch / item["mkdir"].as<std::string>());
    if (item["write"])
      write_file(scratch / item["write"]["file"].as<std::string>(), expand(item["write"]["text"].as<std::string>(), scratch));
  }
}

// Runs one case; returns its failures (each prefixed by the step that failed).
std::vector<std::string> run_case(const YAML::Node& c) {
  TempDir scratch;
  std::vector<std::string> failures;
  if (c["setup"]) run_setup(c["setup"], scratch.path());
  int index = 0;
  for (const auto& step : c["steps"]) {
    ++index;
    std::vector<std::string> args;
    for (const auto& a : step["cmd"]) args.push_back(expand(a.as<std::string>(), scratch.path()));
    const fs::path cwd = step["cwd"] ? scratch / step["cwd"].as<std::string>() : scratch.path();
    const StepResult r = run_step(args, cwd, scratch.path(), step["stdin"] ? step["stdin"].as<std::string>() : "");
    std::vector<std::string> step_failures;
    check_step(step, args, r, cwd, step_failures);
    if (!step_failures.empty()) {
      std::string line = "parity";
      for (const auto& a : args) line += " " + a;
      for (const auto& f : step_failures) failures.push_back("step " + std::to_string(index) + " (" + line + "): " + f);
      failures.push_back("its output:\n" + r.out + r.err);
    }
  }
  if (c["checks"])
    for (const auto& check : c["checks"]) run_check(check, scratch.path(), failures);
  return failures;
}

// Whether the case's assertions are expected to fail: a deliberate difference checked as "still
// differs", or a gap not closed yet. Fixing a gap makes its case pass, and this test then asks for
// the marker to go.
bool expected_to_differ(const YAML::Node& c) { return c["known_gap"] || (c["expected_difference"] && c["still_differs"]); }

class PolygraphyPort : public ::testing::TestWithParam<size_t> {};

TEST_P(PolygraphyPort, PassesPolygraphysAssertions) {
  const PortedCase& c = all_cases()[GetParam()];
  RecordProperty("polygraphy_test", c.node["test"].as<std::string>());
  const auto failures = run_case(c.node);
  std::string report;
  for (const auto& f : failures) report += "  " + f + "\n";
  const std::string where = c.id() + " (" + c.node["test"].as<std::string>() + ", " + c.file + ")";
  if (expected_to_differ(c.node))
    EXPECT_FALSE(failures.empty()) << where << " now passes Polygraphy's assertions: remove its "
                                   << (c.node["known_gap"] ? "known_gap" : "expected_difference") << " marker";
  else
    EXPECT_TRUE(failures.empty()) << where << ":\n" << report;
}

std::string gtest_name(const ::testing::TestParamInfo<size_t>& info) {
  std::string name = all_cases()[info.param].id();
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Cases, PolygraphyPort, ::testing::Range<size_t>(0, all_cases().size()), gtest_name);

TEST(PolygraphyPortCases, IdsAreUniqueAndEveryCaseNamesItsTest) {
  std::set<std::string> ids;
  for (const auto& c : all_cases()) {
    EXPECT_TRUE(ids.insert(c.id()).second) << "duplicate id " << c.id();
    EXPECT_TRUE(c.node["test"] && c.node["steps"] && c.node["steps"].size() > 0) << c.id();
  }
  EXPECT_GE(ids.size(), 180u);
}

// Every deliberate difference and every gap is listed, with its case id, in the differences
// document; and the document lists no case that passes.
TEST(PolygraphyPortCases, DifferencesAndGapsAreDocumented) {
  const std::string doc = read_file(source_dir() / "docs" / "polygraphy-differences.md");
  for (const auto& c : all_cases()) {
    const bool listed = doc.find("`" + c.id() + "`") != std::string::npos;
    const bool differs = c.node["expected_difference"] || c.node["known_gap"];
    EXPECT_EQ(listed, bool(differs)) << c.id() << (differs ? " differs from Polygraphy but is not listed in"
                                                           : " passes but is listed in")
                                     << " docs/polygraphy-differences.md";
  }
}

// The share of ported cases that pass Polygraphy's own assertions may only grow. The bar is
// 90%; kPassingFloor is what parity reaches today.
TEST(PolygraphyPortCases, PassRateDoesNotDrop) {
  constexpr size_t kPassingFloor = 165;
  size_t differing = 0;
  for (const auto& c : all_cases()) differing += c.node["expected_difference"] || c.node["known_gap"];
  const size_t passing = all_cases().size() - differing;
  std::printf("Polygraphy's CLI tests: %zu of %zu ported cases pass their assertions (%.1f%%)\n", passing,
              all_cases().size(), 100.0 * static_cast<double>(passing) / static_cast<double>(all_cases().size()));
  EXPECT_GE(passing, kPassingFloor);
}

}  // namespace
}  // namespace parity::testing::polygraphy_port
