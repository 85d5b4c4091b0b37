// `parity package retest WORKSPACE [--formats ...] [--runtimes ...] [--steps ...]`: run chosen
// steps of a workspace again (what the reproduce_<step>.sh scripts call).
#include "cli/command.h"
#include "cli/commands/package_common.h"
#include "core/logger.h"
#include "core/text.h"
#include "tools/navigator/pipeline.h"
#include "tools/navigator/workspace_lock.h"

namespace parity::cli {
namespace {

namespace nav = tools::navigator;

std::set<std::string> set_of(const options::Args& args, const std::string& dest) {
  std::set<std::string> items;
  for (const auto& value : args.list(dest))
    for (auto& item : split_list(value, "--" + dest)) items.insert(item);
  return items;
}

class PackageRetestCommand : public Command {
 public:
  std::string name() const override { return "package retest"; }
  std::string summary() const override { return "Run steps of a navigator workspace again"; }
  void add_options(options::ArgParser& parser) override {
    parser.add({.flags = {}, .dest = "workspace", .help = "Workspace folder", .metavar = "WORKSPACE", .required = true});
    parser.add({.flags = {"--formats"}, .help = "Formats (default: all)", .metavar = "FORMAT", .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--runtimes"}, .help = "Runtimes (default: all)", .metavar = "NAME", .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--steps"}, .help = "export, conversion, correctness, performance (default: conversion, correctness)",
                .metavar = "STEP", .arity = options::Arity::kOneOrMore});
  }
  int run(const options::Args& args) override {
    const std::filesystem::path workspace = args.get_or("workspace", "");
    const nav::WorkspaceLock lock(workspace, nav::WorkspaceLock::Mode::kExclusive);
    nav::WorkspaceStatus status = nav::read_status(workspace);
    nav::CellSelection selection{set_of(args, "formats"), set_of(args, "runtimes"), set_of(args, "steps")};
    if (selection.steps.empty()) selection.steps = {"conversion", "correctness"};
    for (const auto& step : selection.steps)
      PARITY_CHECK(step == "export" || step == "conversion" || step == "correctness" || step == "performance",
                   kInvalidArgument, "--steps: unknown step '", step, "' (export, conversion, correctness, performance)");
    if (selection.steps.count("performance")) status.config.run_profiling = true;
    nav::NavigatorLog log(workspace / "navigator.log", !logger().enabled(Severity::kInfo));
    const std::filesystem::path source = status.config.source;
    nav::run_cells(workspace, status, selection, std::filesystem::exists(source) ? source : std::filesystem::path(),
                   compare::Isolation{.enabled = true}, log);
    package_cli::print_status_table(status);
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(PackageRetestCommand);

}  // namespace
}  // namespace parity::cli
