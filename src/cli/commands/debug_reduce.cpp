// `parity debug reduce MODEL -o reduced.onnx (--check CMD... | --ref --ort ...)`: shrinks a model
// that fails to the smallest subgraph that still fails (Polygraphy's `debug reduce`). The command
// parses its options (debug_reduce_args.h); the reduction is tools::debug::reduce_model.
#include <filesystem>

#include "cli/command.h"
#include "cli/commands/debug_reduce_args.h"
#include "cli/commands/model_edit_common.h"
#include "core/formats/file_io.h"
#include "core/logger.h"
#include "tools/report/debug_report.h"
#include "tools/report/report_args.h"

namespace parity::cli {
namespace {

namespace fs = std::filesystem;
using namespace parity::tools::debug;

class DebugReduceCommand : public Command {
 public:
  std::string name() const override { return "debug reduce"; }
  std::string summary() const override { return "Reduce a failing model to the smallest subgraph that still fails"; }

  void add_options(options::ArgParser& parser) override {
    model_edit::add_model_argument(parser);
    reduce_args_.add_to(parser);
    model_edit::add_output_options(parser);
    report_args_.add_to(parser);
    parser.set_epilog(DebugReduceArgs::epilog());
  }

  int run(const options::Args& args) override {
    const ReduceModelOptions options = reduce_args_.parse(args);
    const model::Model original = model_edit::load_input(args);
    const fs::path out = model_edit::output_path(args, original);
    for (const auto& path : {out.string(), options.iter_artifact, options.save_replay})
      formats::check_writable_location(path);
    if (auto min_good = args.get("min_good")) formats::check_writable_location(*min_good);
    const tools::report::ReportOptions report_options = report_args_.parse(args);

    ReduceModelResult result = reduce_model(original, options);
    if (!result.any_failed)
      logger().warning(
          "no candidate failed the check: nothing to reduce (does the check fail on the full model?); "
          "saving the model unchanged");
    else
      logger().info("Reduced ", result.node_count, " nodes to ", result.final_nodes.size(), " (",
                    describe_nodes(result.final_nodes), ") in ", result.checks, " checks (", result.ran, " run)");
    model_edit::save_output(result.reduced, out, args);
    if (auto min_good = args.get("min_good")) save_min_good(result, *min_good, args);
    if (report_options.path) {
      tools::report::ReduceSummary summary = reduce_summary(options, std::move(result));
      summary.model = args.get_or("model", "");
      summary.output = out.string();
      tools::report::Report page("parity debug reduce: " + fs::path(summary.model).filename().string(),
                                 current_command_line());
      page.add_section(tools::report::reduce_section(summary));
      page.write(*report_options.path);
      logger().info("Wrote report ", *report_options.path);
    }
    return kExitPassed;
  }

 private:
  static void save_min_good(const ReduceModelResult& result, const std::string& path, const options::Args& args) {
    if (!result.passing) {
      logger().warning("No passing candidate was seen; --min-good ", path, " not written");
      return;
    }
    model_edit::save_output(*result.passing, path, args);
    logger().info("Passing model closest in size (", result.passing_nodes, " nodes) saved to ", path);
  }

  DebugReduceArgs reduce_args_;
  tools::report::ReportArgs report_args_{"every check as a step: candidate size, verdict, time; the final subgraph"};
};

PARITY_REGISTER_COMMAND(DebugReduceCommand);

}  // namespace
}  // namespace parity::cli
