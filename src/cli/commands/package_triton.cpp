// `parity package triton PACKAGE --model-repository DIR --name NAME`: deploy the package's best
// verified format to a Triton Inference Server model repository (NAME/1/model.*, config.pbtxt).
#include "cli/command.h"
#include "cli/commands/package_common.h"
#include "core/logger.h"
#include "core/text.h"
#include "tools/navigator/triton.h"

namespace parity::cli {
namespace {

namespace nav = tools::navigator;

class PackageTritonCommand : public Command {
 public:
  std::string name() const override { return "package triton"; }
  std::string summary() const override { return "Deploy a package's best verified format to a Triton model repository"; }
  void add_options(options::ArgParser& parser) override {
    parser.add({.flags = {}, .dest = "package", .help = "A .nav package or a workspace folder", .metavar = "PACKAGE",
                .required = true});
    parser.add({.flags = {"--model-repository"}, .help = "Triton model repository folder", .metavar = "DIR", .required = true});
    parser.add({.flags = {"--name"}, .help = "Model name in the repository", .metavar = "NAME", .required = true});
    parser.add({.flags = {"--strategy"}, .help = "How to pick the format x runtime",
                .metavar = "STRATEGY",
                .choices = {"min-latency", "max-throughput", "max-throughput-within-latency", "min-latency-and-max-throughput"},
                .default_value = "min-latency"});
    parser.add({.flags = {"--latency-budget-ms"}, .help = "Budget of max-throughput-within-latency", .metavar = "MS"});
    parser.add({.flags = {"--instances"}, .help = "Model instances (instance_group count, default 1)", .metavar = "N",
                .default_value = "1"});
    parser.add({.flags = {"--override"}, .help = "Replace an existing model folder", .arity = options::Arity::kFlag});
  }
  int run(const options::Args& args) override {
    package_cli::OpenedPackage opened(args.get_or("package", ""));
    nav::TritonOptions options;
    options.name = args.get_or("name", "");
    options.strategy = nav::strategy_from_name(args.get_or("strategy", "min-latency"));
    options.latency_budget_ms = args.get_double("latency_budget_ms");
    options.instance_count = static_cast<int>(parse_int(args.get_or("instances", "1"), "--instances"));
    options.override = args.flag("override");
    const auto deployed = nav::deploy_to_triton(opened.descriptor(), args.get_or("model_repository", ""), options);
    logger().info("Deployed ", deployed.choice.format, " (verified on ", deployed.choice.runtime, ") to ",
                  deployed.model_dir.string());
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(PackageTritonCommand);

}  // namespace
}  // namespace parity::cli
