// `parity plugin list MODEL --plugin-dir DIR`: Polygraphy's plugin list, a dry run of `plugin
// match`: how many places in the model each plugin's pattern (DIR/<plugin>/pattern.yaml) matches.
#include "cli/command.h"
#include "cli/commands/model_edit_common.h"
#include "core/logger.h"
#include "tools/plugin_patterns.h"

namespace parity::cli {
namespace {

class PluginListCommand : public Command {
 public:
  std::string name() const override { return "plugin list"; }
  std::string summary() const override {
    return "List the subgraphs that plugins' patterns (PLUGIN_DIR/<plugin>/pattern.yaml) would replace";
  }

  void add_options(options::ArgParser& parser) override {
    model_edit::add_model_argument(parser);
    model_edit::add_plugin_selection_options(parser);
  }

  int run(const options::Args& args) override {
    const model::Model model = model_edit::load_input(args);
    const auto substitutions = model_edit::match_selected_plugins(model, args);
    for (const auto& s : substitutions)
      for (const auto& m : s.instances)
        logger().info("  ", s.name, ": nodes ", join(m.nodes, ", "), " | inputs ", join(m.inputs, ", "), " -> outputs ",
                      join(m.outputs, ", "));
    return kExitPassed;
  }

 private:
  static std::string join(const std::vector<std::string>& items, const std::string& sep) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
    return out;
  }
};

PARITY_REGISTER_COMMAND(PluginListCommand);

}  // namespace
}  // namespace parity::cli
