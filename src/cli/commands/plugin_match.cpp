// `parity plugin match MODEL --plugin-dir DIR [-o config.yaml]`: Polygraphy's plugin match. Finds
// where each plugin's pattern matches and writes the substitutions to a config.yaml (Polygraphy's
// layout) that the user reviews and edits before `plugin replace`.
#include "cli/command.h"
#include "cli/commands/model_edit_common.h"
#include "core/formats/file_io.h"
#include "core/logger.h"
#include "tools/plugin_patterns.h"

namespace parity::cli {
namespace {

class PluginMatchCommand : public Command {
 public:
  std::string name() const override { return "plugin match"; }
  std::string summary() const override {
    return "Find the subgraphs plugins' patterns match and write them to a config.yaml to review for plugin replace";
  }

  void add_options(options::ArgParser& parser) override {
    model_edit::add_model_argument(parser);
    model_edit::add_plugin_selection_options(parser);
    parser.add({.flags = {"-o", "--output"},
                .help = "Where to write the substitutions (default: config.yaml beside the model)",
                .metavar = "CONFIG"});
  }

  int run(const options::Args& args) override {
    const model::Model model = model_edit::load_input(args);
    const auto substitutions = model_edit::match_selected_plugins(model, args);
    std::filesystem::path out = args.get_or("output", "");
    if (out.empty()) out = std::filesystem::path(args.get_or("model", "")).parent_path() / "config.yaml";
    formats::write_binary_file(out.string(), tools::substitutions_to_yaml(substitutions));
    logger().info("Matching subgraphs saved to ", out.string());
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(PluginMatchCommand);

}  // namespace
}  // namespace parity::cli
