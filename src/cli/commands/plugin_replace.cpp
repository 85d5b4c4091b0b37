// `parity plugin replace MODEL --config config.yaml [-o replaced.onnx]`: Polygraphy's plugin
// replace. Every instance listed in the config (as `plugin match` wrote it, maybe edited) is
// replaced by one node of the plugin's op with the instance's inputs, outputs and attributes.
#include <algorithm>

#include "cli/command.h"
#include "cli/commands/model_edit_common.h"
#include "core/logger.h"
#include "model/checker.h"
#include "model/model.h"
#include "model/save_args.h"
#include "tools/plugin_patterns.h"

namespace parity::cli {
namespace {

namespace fs = std::filesystem;

class PluginReplaceCommand : public Command {
 public:
  std::string name() const override { return "plugin replace"; }
  std::string summary() const override {
    return "Replace the subgraphs a config.yaml (from plugin match) lists by one plugin node each";
  }

  void add_options(options::ArgParser& parser) override {
    model_edit::add_model_argument(parser);
    parser.group("Plugins");
    parser.add({.flags = {"--plugin-dir"},
                .help = "Accepted for Polygraphy's command lines; the config file holds everything replace needs",
                .metavar = "DIR"});
    parser.add({.flags = {"--config"}, .help = "The substitutions (default: config.yaml beside the model)",
                .metavar = "CONFIG"});
    parser.group("Output");
    parser.add({.flags = {"-o", "--output"}, .help = "Path of the model to write (default: replaced.onnx beside the model)",
                .metavar = "OUT"});
    model::ModelSaveArgs().add_to(parser);
  }

  int run(const options::Args& args) override {
    const fs::path model_path = args.get_or("model", "");
    const fs::path config = args.has("config") ? fs::path(*args.get("config")) : model_path.parent_path() / "config.yaml";
    fs::path out = args.get_or("output", "");
    if (out.empty()) out = model_path.parent_path() / "replaced.onnx";
    const model::Model model = model_edit::load_input(args);
    std::error_code ec;
    PARITY_CHECK(!fs::equivalent(model_path, out, ec), kInvalidArgument, "output '", out.string(),
                 "' is the input model; choose another path");
    const auto substitutions = tools::load_substitutions(config);
    auto graph = model::Graph::from_model(model);
    for (const auto& [plugin, count] : tools::apply_substitutions(*graph, substitutions))
      logger().info("replaced ", count, " instance(s) of ", plugin);
    // A model that already fails the checker as loaded (Polygraphy's test models leave graph
    // output shapes out) is not the replacement's fault: its result is saved unchecked, with a word.
    const auto findings = model::check_model_proto(model.proto(), model.base_dir());
    const auto first_error = std::find_if(findings.begin(), findings.end(), [](const auto& f) { return f.error; });
    const bool input_checks = first_error == findings.end();
    if (!input_checks)
      logger().warning("'", model_path.string(), "' already fails libonnx's checker (", first_error->message,
                       "); the replaced model is saved without that check");
    model_edit::save_output(graph->to_model(), out, args, input_checks);
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(PluginReplaceCommand);

}  // namespace
}  // namespace parity::cli
