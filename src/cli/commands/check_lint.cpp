// `parity check lint MODEL [-o report.json]`: libonnx's checker plus parity's own lints, with a
// JSON report in Polygraphy's layout. Exits 1 when any entry is an error ("exception").
#include <fstream>

#include "core/formats/file_io.h"
#include "core/formats/polygraphy_json.h"
#include "cli/command.h"
#include "cli/commands/model_edit_common.h"
#include "core/logger.h"
#include "tools/model_lint.h"

namespace parity::cli {
namespace {

class CheckLintCommand : public Command {
 public:
  std::string name() const override { return "check lint"; }
  std::string summary() const override {
    return "Lint an ONNX model: checker errors, unused or dead parts, duplicate names, missing kernels";
  }

  void add_options(options::ArgParser& parser) override {
    parser.add({.flags = {}, .dest = "model", .help = "Path to the ONNX model", .metavar = "MODEL", .required = true});
    parser.add({.flags = {"-o", "--output"}, .help = "Path to save the JSON report", .metavar = "PATH"});
    parser.add({.flags = {"--external-data-dir", "--load-external-data", "--ext"}, .dest = "external_data_dir",
                .help = "Folder holding the model's external data (default: the model's folder)", .metavar = "DIR"});
    model_edit::add_ignore_external_data_option(parser);
    parser.add({.flags = {"--load-input-data", "--load-inputs"}, .dest = "load_inputs",
                .help = "Also run the model with parity's runtime on the first feed of these inputs files "
                        "(Polygraphy JSON): a missing input or a failing node is an error",
                .metavar = "PATH", .arity = options::Arity::kOneOrMore});
  }

  int run(const options::Args& args) override {
    const std::string path = *args.get("model");
    logger().info("Linting model: ", path);
    std::optional<TensorMap> feed;
    if (args.has("load_inputs")) {
      const auto feeds = read_inputs_json(args.list("load_inputs"));
      PARITY_CHECK(!feeds.empty(), kInvalidArgument, "--load-input-data: the files hold no feed");
      feed = feeds.front();
    }
    const tools::LintReport report =
        tools::lint_model_file(path, model_edit::load_options(args), feed ? &*feed : nullptr);
    for (const auto& e : report.entries) {
      std::string scope;
      if (!e.nodes.empty()) {
        scope = "Nodes: ";
        const size_t shown = std::min<size_t>(e.nodes.size(), 8);
        for (size_t i = 0; i < shown; ++i) scope += (i ? ", " : "") + e.nodes[i];
        if (e.nodes.size() > shown) scope += str_cat(" (+", e.nodes.size() - shown, " more)");
        scope += " | ";
      }
      const std::string line = "LINT | " + scope + e.message;
      if (e.level == "exception") logger().error(line);
      else if (e.level == "warning") logger().warning(line);
      else logger().info(line);
    }
    logger().info("Lint summary: ", report.count("exception"), " error(s), ", report.count("warning"),
                  " warning(s); ", report.passing.size(), " node(s) passing, ", report.failing.size(), " failing");
    if (auto out = args.get("output")) {
      formats::write_binary_file(*out, report.to_json() + "\n");
      logger().info("Saved linting report to: ", *out);
    }
    return report.has_errors() ? kExitFailed : kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(CheckLintCommand);

}  // namespace
}  // namespace parity::cli
