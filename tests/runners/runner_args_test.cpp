#include "runners/runner_args.h"

#include <gtest/gtest.h>

#include "runners/registry.h"

namespace parity::runners {
namespace {

TEST(RunnerArgs, FlagsKeepCommandLineOrderAndRepeats) {
  const RunnerArgs group;
  options::ArgParser parser("t", "t");
  group.add_flags_to(parser, "Runners");
  for (const auto& info : RunnerRegistry::instance().all()) EXPECT_TRUE(parser.defines(info.flag)) << info.flag;
  EXPECT_EQ(group.parse_flags(parser.parse({"--ref", "--ref"})), (std::vector<std::string>{"ref", "ref"}));
  EXPECT_TRUE(group.parse_flags(parser.parse({})).empty());
}

TEST(RunnerArgs, ListTakesCommasBracketsAndAFallback) {
  const RunnerArgs group;
  options::ArgParser parser("t", "t");
  group.add_list_to(parser, "Runners to time");
  EXPECT_EQ(group.parse_list(parser.parse({"--runners", "[ref]"}), "ref,ort"), (std::vector<std::string>{"ref"}));
  EXPECT_EQ(group.parse_list(parser.parse({}), "ref"), (std::vector<std::string>{"ref"}));
  auto error_of = [&](const std::vector<std::string>& argv) -> std::string {
    try {
      group.parse_list(parser.parse(argv), "ref");
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of({"--runners", "ref,ref"}), "--runners: 'ref' is named twice");
  EXPECT_EQ(error_of({"--runners", ","}), "--runners: no runner named");
  const std::string unknown = error_of({"--runners", "nope"});
  EXPECT_EQ(unknown.rfind("--runners: unknown runner 'nope'; runners: ", 0), 0u) << unknown;
  EXPECT_NE(unknown.find("ref"), std::string::npos) << unknown;
}

TEST(RunnerArgs, RuntimeOptionsSkipFlagsTheCommandDefines) {
  const RunnerArgs group;
  options::ArgParser parser("t", "t");
  parser.add({.flags = {"--threads"}, .help = "the command's own"});
  group.add_runtime_options_to(parser);
  EXPECT_TRUE(parser.defines("--precision"));  // ref's option group
  size_t threads = 0;
  for (const auto& spec : parser.options())
    for (const auto& flag : spec.flags) threads += flag == "--threads";
  EXPECT_EQ(threads, 1u);
}

}  // namespace
}  // namespace parity::runners
