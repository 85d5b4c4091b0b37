// The man pages and the bash completion against the parsers the commands really parse with: every
// option a command accepts is in its page and its completion, and nothing else is; the pages render
// without groff warnings; the completion completes command words, option choices and file names;
// and the files the build generated are the ones this parity writes.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "cli/command.h"
#include "cli/manual.h"
#include "support/test_support.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;

std::vector<cli::CommandManual> manuals() {
  static const auto commands = cli::CommandRegistry::instance().create_all();
  return cli::command_manuals(commands);
}

std::set<std::string> parser_flags(const cli::CommandManual& m) {
  std::set<std::string> flags;
  for (const auto& o : m.parser.options()) flags.insert(o.flags.begin(), o.flags.end());
  return flags;
}

std::string joined(const std::set<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : " ") + item;
  return out;
}

// The bold words of a page's OPTIONS section that are options ("\fB\-\-iterations\fR").
std::set<std::string> man_page_flags(const std::string& page) {
  const size_t begin = page.find("\n.SH OPTIONS\n");
  const size_t end = page.find("\n.SH ", begin + 1);
  EXPECT_NE(begin, std::string::npos);
  const std::string section = page.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  static const std::regex kBold(R"(\\fB((?:\\-|[A-Za-z0-9_])+)\\fR)");
  std::set<std::string> flags;
  for (std::sregex_iterator it(section.begin(), section.end(), kBold), last; it != last; ++it) {
    const std::string word = std::regex_replace((*it)[1].str(), std::regex(R"(\\-)"), "-");
    if (word.rfind("-", 0) == 0) flags.insert(word);
  }
  return flags;
}

std::set<std::string> files_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
  return names;
}

TEST(ManPages, OnePagePerCommandListingExactlyItsOptions) {
  TempDir tmp;
  const CommandResult r = run_parity({"help", "--format", "man", "--output", (tmp / "man1").string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::set<std::string> expected_files = {"parity.1"};
  for (const auto& m : manuals()) {
    const std::string file = cli::man_page_file_name(m.name);
    expected_files.insert(file);
    const std::string page = read_file(tmp / "man1" / file);
    EXPECT_EQ(joined(man_page_flags(page)), joined(parser_flags(m))) << file;
    for (const auto& o : m.parser.options())
      if (o.flags.empty()) EXPECT_NE(page.find("\\fI" + o.metavar + "\\fR"), std::string::npos) << file << ": " << o.metavar;
    EXPECT_NE(page.find(".TH PARITY\\-"), std::string::npos) << file;
  }
  EXPECT_EQ(files_in(tmp / "man1"), expected_files);
  EXPECT_EQ(cli::man_page_file_name("inspect model"), "parity-inspect-model.1");

  // parity(1) names every command's page and the top-level options.
  const std::string overview = read_file(tmp / "man1" / "parity.1");
  for (const auto& m : manuals()) {
    const std::string file = cli::man_page_file_name(m.name);
    const std::string page = std::regex_replace(file.substr(0, file.size() - 2), std::regex("-"), "\\-");
    EXPECT_NE(overview.find(".BR " + page + " (1)"), std::string::npos) << page;
  }
  std::set<std::string> top;
  for (const auto& o : cli::top_level_options()) top.insert(o.flags.begin(), o.flags.end());
  EXPECT_EQ(joined(man_page_flags(overview)), joined(top));

  // The pages the build generated (and installs) are the ones this parity writes.
  const fs::path built = fs::path(PARITY_BUILD_DIR) / "share" / "man" / "man1";
  ASSERT_EQ(files_in(built), expected_files) << built;
  for (const auto& file : expected_files) EXPECT_EQ(read_file(built / file), read_file(tmp / "man1" / file)) << file;
}

TEST(ManPages, RenderWithoutGroffWarnings) {
  TempDir tmp;
  ASSERT_EQ(run_parity({"help", "--format", "man", "--output", tmp.path().string()}).exit_code, 0);
  for (const auto& file : files_in(tmp.path())) {
    const CommandResult r = run_shell("groff -man -ww -z '" + (tmp / file).string() + "'");
    EXPECT_EQ(r.exit_code, 0) << file << ": " << r.output;
    EXPECT_EQ(r.output, "") << file;
  }
  // As man shows it: options in ASCII hyphen-minus, so they can be copied into a shell.
  const CommandResult page = run_shell("MANWIDTH=120 man -l -P cat '" + (tmp / "parity-run.1").string() + "' 2>&1");
  ASSERT_EQ(page.exit_code, 0) << page.output;
  EXPECT_TRUE(std::regex_search(page.output, std::regex(R"(\n\s+--ref\s)"))) << page.output.substr(0, 3000);
  EXPECT_NE(page.output.find("parity-run - "), std::string::npos) << page.output.substr(0, 500);
}

// Runs the generated completion in bash for each case (the words of a command line, the last one
// being completed) from `cwd`, returning the sorted candidates of each.
std::vector<std::string> complete(const fs::path& script, const fs::path& cwd,
                                  const std::vector<std::vector<std::string>>& cases) {
  std::string program = "source '" + script.string() + "'\n"
                        "complete_at() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); _parity;"
                        " printf '%s\\n' \"${COMPREPLY[@]}\" | sort -u | tr '\\n' ' '; echo; }\n";
  for (const auto& words : cases) {
    program += "complete_at";
    for (const auto& w : words) program += " '" + w + "'";
    program += "\n";
  }
  write_file(cwd / "complete.sh", program);
  const CommandResult r = run_shell("cd '" + cwd.string() + "' && bash --norc --noprofile complete.sh");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::vector<std::string> lines;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    lines.push_back(line);
  }
  EXPECT_EQ(lines.size(), cases.size()) << r.output;
  lines.resize(cases.size());
  return lines;
}

std::vector<std::string> words_of(const std::string& name) {
  std::vector<std::string> words = {"parity"};
  std::istringstream in(name);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

TEST(BashCompletion, CompletesExactlyEachCommandsOptions) {
  TempDir tmp;
  const fs::path script = tmp / "parity";
  ASSERT_EQ(run_parity({"help", "--format", "bash-completion", "--output", script.string()}).exit_code, 0);
  std::vector<std::vector<std::string>> cases;
  std::vector<std::string> expected;
  for (const auto& m : manuals()) {
    auto words = words_of(m.name);
    words.push_back("model.onnx");  // a positional before the options changes nothing
    words.push_back("-");
    cases.push_back(words);
    expected.push_back(joined(parser_flags(m)));
    // Each option with choices completes to its choices, after a space or after '='.
    for (const auto& o : m.parser.options()) {
      if (o.choices.empty() || o.flags.empty()) continue;
      auto with_value = words_of(m.name);
      with_value.insert(with_value.end(), {o.flags.back(), ""});
      cases.push_back(with_value);
      expected.push_back(joined(std::set<std::string>(o.choices.begin(), o.choices.end())));
      auto with_equals = words_of(m.name);
      with_equals.insert(with_equals.end(), {o.flags.back(), "=", ""});
      cases.push_back(with_equals);
      expected.push_back(expected.back());
    }
  }
  const auto got = complete(script, tmp.path(), cases);
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string line;
    for (const auto& w : cases[i]) line += w + " ";
    EXPECT_EQ(got[i], expected[i]) << line;
  }
  EXPECT_GT(cases.size(), manuals().size());  // some options have choices
  // The script the build generated (and installs) is the one this parity writes.
  EXPECT_EQ(read_file(fs::path(PARITY_BUILD_DIR) / "share" / "bash-completion" / "completions" / "parity"),
            read_file(script));
}

TEST(BashCompletion, CompletesCommandWordsAndFileNames) {
  TempDir tmp;
  const fs::path script = tmp / "parity";
  ASSERT_EQ(run_parity({"help", "--format", "bash-completion", "--output", script.string()}).exit_code, 0);
  write_file(tmp / "model.onnx", "");
  std::set<std::string> first_words = {"help"}, inspect_words;
  for (const auto& o : cli::top_level_options()) first_words.insert(o.flags.begin(), o.flags.end());
  for (const auto& m : manuals()) {
    first_words.insert(m.name.substr(0, m.name.find(' ')));
    if (m.name.rfind("inspect ", 0) == 0) inspect_words.insert(m.name.substr(8));
  }
  ASSERT_FALSE(inspect_words.empty());
  const auto got = complete(script, tmp.path(),
                            {{"parity", ""},
                             {"parity", "inspect", ""},
                             {"parity", "--extension", "x.so", "inspect", ""},
                             {"parity", "run", "mo"},
                             {"parity", "run", "model.onnx", "--save-inputs", "mo"},
                             {"parity", "help", "insp"}});
  EXPECT_EQ(got[0], joined(first_words));
  EXPECT_EQ(got[1], joined(inspect_words));
  EXPECT_EQ(got[2], joined(inspect_words));
  EXPECT_EQ(got[3], "model.onnx");
  EXPECT_EQ(got[4], "model.onnx");
  EXPECT_EQ(got[5], "inspect");
}

TEST(HelpCommand, ShowsACommandsHelpOrSaysWhatIsUnknown) {
  const CommandResult help = run_parity({"help", "inspect", "model"});
  const CommandResult dash = run_parity({"inspect", "model", "--help"});
  EXPECT_EQ(help.exit_code, 0) << help.output;
  EXPECT_EQ(help.output, dash.output);
  const CommandResult unknown = run_parity({"help", "frobnicate"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_EQ(unknown.output, "[E] parity help: unknown command 'frobnicate'; run `parity --help` to list commands\n");
  const CommandResult no_dir = run_parity({"help", "--format", "man"});
  EXPECT_EQ(no_dir.exit_code, 1);
  EXPECT_NE(no_dir.output.find("--output DIR is required"), std::string::npos) << no_dir.output;
}

}  // namespace
}  // namespace parity::testing
