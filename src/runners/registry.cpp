#include "runners/registry.h"

#include <algorithm>

#include "core/text.h"

namespace parity::runners {

RunnerRegistry& RunnerRegistry::instance() {
  static RunnerRegistry registry;
  return registry;
}

Status RunnerInfo::available(const RunnerOptions& options) const {
  return availability ? availability(options) : Status::ok();
}

void RunnerInfo::require_available(const RunnerOptions& options) const {
  const Status status = available(options);
  PARITY_CHECK(status.is_ok(), kUnavailable, "runner '", name, "' (", flag, ") is unavailable: ", status.message());
}

RunnerOptions RunnerInfo::parse_options(const std::vector<std::string>& tokens) const {
  options::ArgParser parser(name, "options of runner " + name);
  options.add_missing_to(parser);
  RunnerOptions parsed;
  options.parse_into(parser.parse(tokens), parsed);
  return parsed;
}

int parse_thread_count(const std::string& text, const std::string& flag, int minimum) {
  const int64_t threads = parse_int(text, flag);
  PARITY_CHECK(threads >= minimum && threads <= 1024, kInvalidArgument, flag, " must be between ", minimum,
               minimum == 0 ? " (the runtime's default)" : "", " and 1024, got ", text);
  return static_cast<int>(threads);
}

RunnerOptions parse_runner_options(const std::vector<std::string>& tokens) {
  options::ArgParser parser("runners", "every runner's options");
  for (const auto& info : RunnerRegistry::instance().all()) info.options.add_missing_to(parser);
  const auto given = parser.parse(tokens);
  RunnerOptions parsed;
  for (const auto& info : RunnerRegistry::instance().all()) info.options.parse_into(given, parsed);
  return parsed;
}

void RunnerRegistry::add(RunnerInfo info) {
  PARITY_ASSERT(!find(info.name), "runner '", info.name, "' registered twice");
  const auto after = std::upper_bound(runners_.begin(), runners_.end(), info.listing_order,
                                      [](int order, const RunnerInfo& r) { return order < r.listing_order; });
  runners_.insert(after, std::move(info));
}

const RunnerInfo* RunnerRegistry::find(const std::string& name) const {
  for (const auto& r : runners_)
    if (r.name == name) return &r;
  return nullptr;
}

const RunnerInfo* RunnerRegistry::find_flag(const std::string& flag) const {
  for (const auto& r : runners_)
    if (r.flag == flag || std::find(r.aliases.begin(), r.aliases.end(), flag) != r.aliases.end()) return &r;
  return nullptr;
}

std::string AbsentRuntimeInfo::refusal(const std::string& flag, const Option& option) const {
  return str_cat(flag, " needs ", runtime, ", which parity does not have; closest in parity: ", option.closest);
}

}  // namespace parity::runners
