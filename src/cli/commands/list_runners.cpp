// `parity runners` (also `parity --list-runners`): which runtimes this build can use, with their
// versions, or why one is unavailable.
#include <cstdio>

#include "cli/command.h"
#include "core/logger.h"
#include "runners/extension.h"
#include "runners/registry.h"
#include "runners/runner_args.h"

namespace parity::cli {
namespace {

class ListRunnersCommand : public Command {
 public:
  std::string name() const override { return "runners"; }
  std::string summary() const override { return "List the runners (runtimes) and whether each is available"; }

  void add_options(options::ArgParser& parser) override {
    // Runner options that change where a runtime is found (e.g. --ort-library) apply here too.
    for (const auto& info : runners::RunnerRegistry::instance().all()) info.options.add_missing_to(parser);
  }

  // Every extension library given or found, loaded or not, with what it brought or why not.
  static std::string extensions_section() {
    const auto& records = runners::loaded_extensions();
    if (records.empty()) return "";
    std::string out = "Extensions:\n";
    for (const auto& r : records) {
      out += str_cat("  ", r.name, r.version.empty() ? "" : " " + r.version, "  ", r.path, "\n", std::string(20, ' '));
      if (r.status.is_ok())
        out += str_cat("loaded: runners ", r.runners.empty() ? "(none)" : join_names(r.runners), "; kernels ",
                       r.kernels.empty() ? "(none)" : join_names(r.kernels), "\n");
      else
        out += "unavailable: " + r.status.message() + "\n";
    }
    return out;
  }

  int run(const options::Args& args) override {
    const runners::RunnerOptions runner_options = runners::RunnerArgs().parse_runtime_options(args);
    std::string out = "Runners:\n";
    for (const auto& info : runners::RunnerRegistry::instance().all()) {
      const Status status = info.available(runner_options);
      std::string state;
      if (status.is_ok()) {
        const std::string version = info.version ? info.version(runner_options) : std::string();
        state = version.empty() ? "available" : "available, version " + version;
      } else {
        state = "unavailable: " + status.message();
      }
      out += str_cat("  ", info.name, std::string(info.name.size() < 8 ? 8 - info.name.size() : 1, ' '),
                     info.flag, std::string(info.flag.size() < 10 ? 10 - info.flag.size() : 1, ' '),
                     info.description, "\n", std::string(20, ' '), state, "\n");
      if (!info.aliases.empty()) out += str_cat(std::string(20, ' '), "also selected by: ", join_names(info.aliases), "\n");
      if (status.is_ok() && info.details) {
        const std::string details = info.details(runner_options);
        if (!details.empty()) out += std::string(20, ' ') + details + "\n";
      }
    }
    out += extensions_section();
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(ListRunnersCommand);

}  // namespace
}  // namespace parity::cli
