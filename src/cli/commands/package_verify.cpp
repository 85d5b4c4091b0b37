// `parity package verify PACKAGE --format F --runtime R`: record the user's verification of one
// format x runtime (Model Navigator's set_verified); a .nav is updated in place.
#include "cli/command.h"
#include "cli/commands/package_common.h"
#include "core/logger.h"

namespace parity::cli {
namespace {

class PackageVerifyCommand : public Command {
 public:
  std::string name() const override { return "package verify"; }
  std::string summary() const override { return "Mark a format x runtime of a package as verified by you"; }
  void add_options(options::ArgParser& parser) override {
    parser.add({.flags = {}, .dest = "package", .help = "A .nav package or a workspace folder", .metavar = "PACKAGE",
                .required = true});
    parser.add({.flags = {"--format"}, .help = "Format to mark", .metavar = "FORMAT", .required = true});
    parser.add({.flags = {"--runtime"}, .help = "Runtime to mark", .metavar = "NAME", .required = true});
    parser.add({.flags = {"--unverify"}, .help = "Clear the mark instead", .arity = options::Arity::kFlag});
  }
  int run(const options::Args& args) override {
    package_cli::OpenedPackage opened(args.get_or("package", ""));
    const std::string format = args.get_or("format", ""), runtime = args.get_or("runtime", "");
    opened.descriptor().set_verified(format, runtime, !args.flag("unverify"));
    opened.write_back();
    logger().info(format, " on ", runtime, args.flag("unverify") ? " is no longer verified" : " is verified");
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(PackageVerifyCommand);

}  // namespace
}  // namespace parity::cli
