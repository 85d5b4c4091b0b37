// `parity check lint MODEL [-o report.json]`: libonnx's checker plus parity's own lints, with a
// JSON report in Polygraphy's layout. Exits 1 when any entry is an error ("exception").
#include <fstream>

#include "core/formats/file_io.h"
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
  }

  int run(const options::Args& args) override {
    const std::string path = *args.get("model");
    logger().info("Linting model: ", path);
    const tools::LintReport report = tools::lint_model_file(path, model_edit::load_options(args));
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
