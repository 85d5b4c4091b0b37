// `parity package status PACKAGE`: the formats, their steps and measurements, and the best runtime
// by each strategy.
#include <fmt/format.h>

#include "cli/command.h"
#include "cli/commands/package_common.h"
#include "core/logger.h"
#include "tools/report/package_report.h"
#include "tools/report/report_args.h"

namespace parity::cli {
namespace {

namespace nav = tools::navigator;

class PackageStatusCommand : public Command {
 public:
  std::string name() const override { return "package status"; }
  std::string summary() const override { return "Show the status of a .nav package or navigator workspace"; }
  void add_options(options::ArgParser& parser) override {
    parser.add({.flags = {}, .dest = "package", .help = "A .nav package or a workspace folder", .metavar = "PACKAGE",
                .required = true});
    parser.add({.flags = {"--latency-budget-ms"}, .help = "Budget of the max-throughput-within-latency strategy",
                .metavar = "MS"});
    report_args_.add_to(parser);
  }
  int run(const options::Args& args) override {
    const tools::report::ReportOptions report_options = report_args_.parse(args);
    package_cli::OpenedPackage opened(args.get_or("package", ""));
    const auto& package = opened.descriptor();
    package_cli::print_status_table(package.status());
    const std::optional<double> budget = args.get_double("latency_budget_ms");
    for (const char* name : {"min-latency", "max-throughput", "max-throughput-within-latency", "min-latency-and-max-throughput"}) {
      const auto choice = package.best_runtime(nav::strategy_from_name(name), budget);
      if (choice)
        fmt::print("best by {}: {} on {} (p50 {:.3f} ms at batch 1, {:.1f}/s at batch {})\n", name, choice->format,
                   choice->runtime, choice->p50_ms, choice->throughput, choice->batch_size);
      else
        fmt::print("best by {}: none\n", name);
    }
    if (report_options.path) {
      tools::report::Report report("parity package status", current_command_line());
      report.add_section(tools::report::package_section(package.status()));
      report.write(*report_options.path);
      logger().info("Wrote report: ", *report_options.path);
    }
    return kExitPassed;
  }

 private:
  tools::report::ReportArgs report_args_{"formats, steps, measured tolerances, latency and throughput per batch size"};
};

PARITY_REGISTER_COMMAND(PackageStatusCommand);

}  // namespace
}  // namespace parity::cli
