// `parity runners` (also `parity --list-runners`): which runtimes this build can use, with their
// versions, or why one is unavailable.
#include <cstdio>

#include "cli/command.h"
#include "core/logger.h"
#include "runners/registry.h"

namespace parity::cli {
namespace {

class ListRunnersCommand : public Command {
 public:
  std::string name() const override { return "runners"; }
  std::string summary() const override { return "List the runners (runtimes) and whether each is available"; }

  void add_options(ArgParser& parser) override {
    // Runner options that change where a runtime is found (e.g. --ort-library) apply here too.
    for (const auto& info : RunnerRegistry::instance().all())
      if (info.add_options) info.add_options(parser);
  }

  int run(const Args& args) override {
    std::string out = "Runners:\n";
    for (const auto& info : RunnerRegistry::instance().all()) {
      const Status status = info.availability ? info.availability(&args) : Status::ok();
      std::string state;
      if (status.is_ok()) {
        const std::string version = info.version ? info.version(&args) : std::string();
        state = version.empty() ? "available" : "available, version " + version;
      } else {
        state = "unavailable: " + status.message();
      }
      out += str_cat("  ", info.name, std::string(info.name.size() < 8 ? 8 - info.name.size() : 1, ' '),
                     info.flag, std::string(info.flag.size() < 10 ? 10 - info.flag.size() : 1, ' '),
                     info.description, "\n", std::string(20, ' '), state, "\n");
      if (status.is_ok() && info.details) {
        const std::string details = info.details(&args);
        if (!details.empty()) out += std::string(20, ' ') + details + "\n";
      }
    }
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(ListRunnersCommand);

}  // namespace
}  // namespace parity::cli
