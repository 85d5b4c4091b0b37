// `parity package load MODEL.nav -o DIR`: unpack a .nav package (refusing entries that would land
// outside DIR) and re-test its formats on this machine from the stored samples.
#include "cli/command.h"
#include "cli/commands/package_common.h"
#include "core/logger.h"

namespace parity::cli {
namespace {

class PackageLoadCommand : public Command {
 public:
  std::string name() const override { return "package load"; }
  std::string summary() const override { return "Unpack a .nav package and re-test its formats here"; }
  void add_options(options::ArgParser& parser) override {
    parser.add({.flags = {}, .dest = "package", .help = "The .nav package", .metavar = "PACKAGE", .required = true});
    parser.add({.flags = {"-o", "--output"}, .help = "Folder to unpack into (must not exist or be empty)", .metavar = "DIR",
                .required = true});
    parser.add({.flags = {"--retest-conversions"}, .help = "Export the derived formats again before re-testing",
                .arity = options::Arity::kFlag});
    parser.add({.flags = {"--run-profiling"}, .help = "Run the performance step again", .arity = options::Arity::kFlag});
    parser.add({.flags = {"--no-retest"}, .help = "Only unpack", .arity = options::Arity::kFlag});
  }
  int run(const options::Args& args) override {
    tools::navigator::LoadOptions options;
    options.retest = !args.flag("no_retest");
    options.retest_conversions = args.flag("retest_conversions");
    options.run_profiling = args.flag("run_profiling");
    options.quiet = !logger().enabled(Severity::kInfo);
    const auto package = tools::navigator::PackageDescriptor::load(args.get_or("package", ""), args.get_or("output", ""), options);
    package_cli::print_status_table(package.status());
    if (options.retest && !package.any_passed()) {
      logger().error("no format passed its re-test on this machine");
      return kExitFailed;
    }
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(PackageLoadCommand);

}  // namespace
}  // namespace parity::cli
