#include "runners/runner_args.h"

#include <algorithm>

#include "core/text.h"
#include "options/refused_option.h"
#include "runners/registry.h"

namespace parity::runners {

namespace {

// Dest of a runner's selection flag: "runner:" + name, so that no runtime option can clash.
constexpr std::string_view kFlagPrefix = "runner:";

// An absent runtime's options that the parser does not define itself (convert's --fp16 is
// parity's own), each refused with its closest parity option.
void add_refused(options::ArgParser& parser, const AbsentRuntimeInfo& absent,
                 const std::vector<AbsentRuntimeInfo::Option>& refused) {
  for (const auto& option : refused)
    for (const auto& flag : option.flags)
      if (!parser.defines(flag))
        parser.add(options::refused_option(flag, absent.refusal(flag, option)));
}

}  // namespace

void RunnerArgs::add_flags_to(options::ArgParser& parser, const std::string& group) const {
  parser.group(group);
  for (const auto& info : RunnerRegistry::instance().all()) {
    std::vector<std::string> flags = {info.flag};
    for (const auto& alias : info.aliases)
      if (!parser.defines(alias)) flags.push_back(alias);
    parser.add({.flags = flags, .dest = std::string(kFlagPrefix) + info.name,
                .help = "Run with " + info.description, .arity = options::Arity::kCount});
  }
  for (const auto& absent : RunnerRegistry::instance().absent())
    add_refused(parser, absent, absent.runner_flags);
}

std::vector<std::string> RunnerArgs::parse_flags(const options::Args& args) const {
  std::vector<std::string> names;
  for (const auto& dest : args.occurrences())
    if (dest.rfind(kFlagPrefix, 0) == 0) names.push_back(dest.substr(kFlagPrefix.size()));
  return names;
}

options::OptionSpec RunnerArgs::list_spec(const std::string& help) {
  return {.flags = {"--runners"}, .help = help, .metavar = "NAMES", .arity = options::Arity::kOneOrMore};
}

void RunnerArgs::add_list_to(options::ArgParser& parser, const std::string& help) const {
  parser.add(list_spec(help));
}

std::vector<std::string> RunnerArgs::parse_list(const options::Args& args, const std::string& fallback) const {
  return runner_list(args.has("runners") ? args.list("runners") : std::vector<std::string>{fallback});
}

std::vector<std::string> RunnerArgs::runner_list(const std::vector<std::string>& values) {
  std::vector<std::string> names;
  for (const auto& value : values)
    for (auto& item : split_list(value, "--runners"))
      if (!item.empty()) names.push_back(std::move(item));
  PARITY_CHECK(!names.empty(), kInvalidArgument, "--runners: no runner named");
  std::vector<std::string> known;
  for (const auto& info : RunnerRegistry::instance().all()) known.push_back(info.name);
  for (const auto& name : names) {
    PARITY_CHECK(RunnerRegistry::instance().find(name), kInvalidArgument, "--runners: unknown runner '", name,
                 "'; runners: ", join_names(known));
    PARITY_CHECK(std::count(names.begin(), names.end(), name) == 1, kInvalidArgument, "--runners: '", name,
                 "' is named twice");
  }
  return names;
}

void RunnerArgs::add_runtime_options_to(options::ArgParser& parser) const {
  for (const auto& info : RunnerRegistry::instance().all()) info.options.add_missing_to(parser);
  add_absent_options_to(parser);
}

RunnerOptions RunnerArgs::parse_runtime_options(const options::Args& args) const {
  RunnerOptions options;
  for (const auto& info : RunnerRegistry::instance().all()) info.options.parse_into(args, options);
  return options;
}

void RunnerArgs::add_absent_options_to(options::ArgParser& parser) const {
  for (const auto& absent : RunnerRegistry::instance().absent()) add_refused(parser, absent, absent.options);
}

}  // namespace parity::runners
