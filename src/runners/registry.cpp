#include "runners/registry.h"

namespace parity::runners {

RunnerRegistry& RunnerRegistry::instance() {
  static RunnerRegistry registry;
  return registry;
}

void RunnerRegistry::add(RunnerInfo info) {
  PARITY_ASSERT(!find(info.name), "runner '", info.name, "' registered twice");
  runners_.push_back(std::move(info));
}

const RunnerInfo* RunnerRegistry::find(const std::string& name) const {
  for (const auto& r : runners_)
    if (r.name == name) return &r;
  return nullptr;
}

}  // namespace parity::runners
