#include "runners/registry.h"

#include <algorithm>

#include "core/text.h"

namespace parity::runners {

RunnerRegistry& RunnerRegistry::instance() {
  static RunnerRegistry registry;
  return registry;
}

Status RunnerInfo::available(const options::Args* args) const {
  return availability ? availability(args) : Status::ok();
}

void RunnerInfo::require_available(const options::Args* args) const {
  const Status status = available(args);
  PARITY_CHECK(status.is_ok(), kUnavailable, "runner '", name, "' (", flag, ") is unavailable: ", status.message());
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
