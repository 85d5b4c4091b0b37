// `parity package save WORKSPACE -o MODEL.nav`: a navigator workspace as a .nav package (a zip).
#include "cli/command.h"
#include "cli/commands/package_common.h"
#include "core/logger.h"

namespace parity::cli {
namespace {

class PackageSaveCommand : public Command {
 public:
  std::string name() const override { return "package save"; }
  std::string summary() const override { return "Save a navigator workspace as a .nav package"; }
  void add_options(options::ArgParser& parser) override {
    parser.add({.flags = {}, .dest = "workspace", .help = "Workspace of `parity optimize`", .metavar = "WORKSPACE",
                .required = true});
    parser.add({.flags = {"-o", "--output"}, .help = "The .nav file to write", .metavar = "PACKAGE", .required = true});
    parser.add({.flags = {"--no-data"}, .help = "Leave the samples and reference outputs (model_input/, model_output/) out",
                .arity = options::Arity::kFlag});
    parser.add({.flags = {"--override"}, .help = "Replace an existing package file", .arity = options::Arity::kFlag});
  }
  int run(const options::Args& args) override {
    const tools::navigator::PackageDescriptor package(args.get_or("workspace", ""));
    const std::string out = args.get_or("output", "");
    package.save(out, {.keep_data = !args.flag("no_data"), .override = args.flag("override")});
    logger().info("Saved package to: ", out);
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(PackageSaveCommand);

}  // namespace
}  // namespace parity::cli
