#include "runners/runner_args.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runners/opencv/opencv_options.h"
#include "runners/ort/ort_runner.h"
#include "runners/ref/ref_runner.h"
#include "runners/registry.h"

namespace parity::runners {
namespace {

// --help and --list-runners list the built-in runners in one fixed order, whatever order their
// registrars ran in (static initialization follows the link order, which unity batches change).
TEST(RunnerRegistry, BuiltInRunnersAreListedInTheirFixedOrder) {
  const auto& all = RunnerRegistry::instance().all();
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end(),
                             [](const RunnerInfo& a, const RunnerInfo& b) { return a.listing_order < b.listing_order; }));
  std::vector<std::string> built_in;
  for (const auto& info : all)
    if (info.listing_order < 100) built_in.push_back(info.name);
  std::vector<std::string> expected;
  for (const char* name : {"ref", "plan", "opencv", "ort", "torch"})
    if (RunnerRegistry::instance().find(name)) expected.push_back(name);
  EXPECT_EQ(built_in, expected);
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front().name, "ref");
}

TEST(RunnerArgs, FlagsKeepCommandLineOrderAndRepeats) {
  const RunnerArgs group;
  options::ArgParser parser("t", "t");
  group.add_flags_to(parser, "Runners");
  for (const auto& info : RunnerRegistry::instance().all()) EXPECT_TRUE(parser.defines(info.flag)) << info.flag;
  EXPECT_EQ(group.parse_flags(parser.parse({"--ref", "--ref"})), (std::vector<std::string>{"ref", "ref"}));
  EXPECT_TRUE(group.parse_flags(parser.parse({})).empty());
}

// Polygraphy's spellings: each runner's aliases select it; absent runtimes' flags and options are
// refused with the closest parity option.
TEST(RunnerArgs, AliasesSelectTheirRunnerAndAbsentRuntimesAreRefused) {
  const RunnerArgs group;
  options::ArgParser parser("t", "t");
  group.add_flags_to(parser, "Runners");
  group.add_runtime_options_to(parser);
  for (const auto& info : RunnerRegistry::instance().all())
    for (const auto& alias : info.aliases) {
      EXPECT_EQ(RunnerRegistry::instance().find_flag(alias), &info) << alias;
      EXPECT_EQ(group.parse_flags(parser.parse({alias, info.flag})), (std::vector<std::string>{info.name, info.name}));
    }
  ASSERT_TRUE(RunnerRegistry::instance().find_flag("--onnxrt"));
  EXPECT_EQ(RunnerRegistry::instance().find_flag("--onnxrt")->name, "ort");
  EXPECT_EQ(RunnerRegistry::instance().find_flag("--pluginref")->name, "ref");
  EXPECT_EQ(RunnerRegistry::instance().find_flag("--trt"), nullptr);
  ASSERT_FALSE(RunnerRegistry::instance().absent().empty());
  for (const auto& absent : RunnerRegistry::instance().absent())
    for (const auto* list : {&absent.runner_flags, &absent.options})
      for (const auto& option : *list)
        for (const auto& flag : option.flags) {
          try {
            parser.parse({flag});
            ADD_FAILURE() << flag << " was accepted";
          } catch (const Error& e) {
            EXPECT_EQ(std::string(e.what()), absent.refusal(flag, option));
            EXPECT_NE(std::string(e.what()).find("needs " + absent.runtime + ", which parity does not have; closest "
                                                 "in parity: "),
                      std::string::npos);
          }
        }
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

TEST(RunnerArgs, EachRunnersOptionsComeBackAsItsOwnType) {
  const RunnerArgs group;
  options::ArgParser parser("t", "t");
  group.add_runtime_options_to(parser);
  const RunnerOptions options = group.parse_runtime_options(
      parser.parse({"--threads", "3", "--kernels", "reference", "--isa", "avx2", "--ort-threads", "2",
                    "--opencv-no-fusion", "--profile-index", "1"}));
  const RefRunnerOptions* ref = options.find<RefRunnerOptions>();
  ASSERT_NE(ref, nullptr);
  EXPECT_EQ(ref->threads, 3);
  EXPECT_EQ(ref->kernels, runtime::KernelTier::kReference);
  EXPECT_EQ(ref->isa, "avx2");  // the build options' --isa, borrowed
  EXPECT_EQ(ref->profile_index, 1);
  EXPECT_EQ(ref->session_options().threads, 3);
  EXPECT_EQ(options.find<ort::OrtRunnerOptions>()->intra_op_threads, 2);
  EXPECT_FALSE(options.find<OpenCvRunnerOptions>()->fusion);
  // Nothing given: every runner's defaults.
  const RunnerOptions defaults = group.parse_runtime_options(parser.parse({}));
  EXPECT_EQ(defaults.find<RefRunnerOptions>()->threads, 1);
  EXPECT_FALSE(defaults.find<RefRunnerOptions>()->isa.has_value());
  EXPECT_TRUE(defaults.find<OpenCvRunnerOptions>()->fusion);
}

TEST(RunnerArgs, ABadRunnerOptionValueNamesTheOption) {
  const RunnerArgs group;
  options::ArgParser parser("t", "t");
  group.add_runtime_options_to(parser);
  try {
    group.parse_runtime_options(parser.parse({"--threads", "0"}));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("--threads must be between 1 and 1024"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_runner_options({"--no-such-option"}), Error);
}

TEST(RunnerArgs, SetThreadsGivesEveryRunnerTheCount) {
  RunnerOptions options = parse_runner_options({"--ort-config", "session.force_spinning_stop=0"});
  for (const auto& info : RunnerRegistry::instance().all())
    if (info.set_threads) info.set_threads(options, 4);
  EXPECT_EQ(options.find<RefRunnerOptions>()->threads, 4);
  const auto* ort = options.find<ort::OrtRunnerOptions>();
  EXPECT_EQ(ort->intra_op_threads, 4);
  EXPECT_EQ(ort->inter_op_threads, 1);
  // The user's spinning setting stays; without one, idle workers stop spinning between runs.
  using Entry = std::pair<std::string, std::string>;
  EXPECT_EQ(ort->config_entries, (std::vector<Entry>{{"session.force_spinning_stop", "0"}}));
  RunnerOptions fresh;
  RunnerRegistry::instance().find("ort")->set_threads(fresh, 2);
  EXPECT_EQ(fresh.find<ort::OrtRunnerOptions>()->config_entries,
            (std::vector<Entry>{{"session.force_spinning_stop", "1"}}));
  EXPECT_EQ(options.find<OpenCvRunnerOptions>()->threads, 4);
}

}  // namespace
}  // namespace parity::runners
