// `parity package profile PACKAGE`: run the performance step again on every format x runtime that
// passed, here, with the package's or new profiler settings; a .nav is updated in place.
#include "cli/command.h"
#include "cli/commands/package_common.h"

namespace parity::cli {
namespace {

class PackageProfileCommand : public Command {
 public:
  std::string name() const override { return "package profile"; }
  std::string summary() const override { return "Profile a .nav package's formats again on this machine"; }
  void add_options(options::ArgParser& parser) override {
    parser.add({.flags = {}, .dest = "package", .help = "A .nav package or a workspace folder", .metavar = "PACKAGE",
                .required = true});
    package_cli::add_profiler_overrides(parser);
  }
  int run(const options::Args& args) override {
    package_cli::OpenedPackage opened(args.get_or("package", ""));
    opened.descriptor().profile(package_cli::profiler_overrides(args));
    opened.write_back();
    package_cli::print_status_table(opened.descriptor().status());
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(PackageProfileCommand);

}  // namespace
}  // namespace parity::cli
