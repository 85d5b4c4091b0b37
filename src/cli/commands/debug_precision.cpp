// `parity debug precision MODEL --fp16|--bf16`: the layers that must stay fp32 for a
// reduced-precision plan to pass against the fp32 model (Polygraphy's debug precision), and the
// --layer-precisions that make `parity convert` build a plan that passes.
#include "cli/command.h"
#include "cli/commands/model_edit_common.h"
#include "compare/compare_args.h"
#include "compare/feed_files.h"
#include "core/logger.h"
#include "core/text.h"
#include "options/data_loader_args.h"
#include "tools/debug/plan_check.h"
#include "tools/debug_precision.h"
#include "tools/report/debug_report.h"
#include "tools/report/report_args.h"

namespace parity::cli {
namespace {

class DebugPrecisionCommand final : public Command {
 public:
  std::string name() const override { return "debug precision"; }
  std::string summary() const override {
    return "Find the layers that must run in fp32 for a reduced-precision plan to pass against the fp32 model";
  }
  void add_options(options::ArgParser& parser) override {
    model_edit::add_model_argument(parser);
    parser.group("Search");
    parser.add({.flags = {"--fp16"}, .help = "Search an fp16 plan (default)", .arity = options::Arity::kFlag});
    parser.add({.flags = {"--bf16"}, .help = "Search a bf16 plan", .arity = options::Arity::kFlag});
    parser.add({.flags = {"--mode"}, .help = "bisect: binary search for each layer; linear: one layer at a time",
                .choices = {"bisect", "linear"}, .default_value = "bisect"});
    parser.add({.flags = {"--direction"},
                .help = "forward: pin layers from the inputs on; reverse: from the outputs back",
                .choices = {"forward", "reverse"}, .default_value = "forward"});
    tolerance_args_.add_to(parser);
    data_loader_args_.add_to(parser);
    iteration_args_.add_iterations_to(parser);
    report_args_.add_to(parser);
    plan_check_args_.add_to(parser);
  }

  int run(const options::Args& args) override {
    tools::PrecisionSearch search;
    PARITY_CHECK(!(args.flag("fp16") && args.flag("bf16")), kInvalidArgument, "--fp16 and --bf16 together: choose one");
    search.reduced = args.flag("bf16") ? DType::kBFloat16 : DType::kFloat16;
    search.mode = args.get_or("mode", "bisect") == "linear" ? tools::PrecisionSearch::Mode::kLinear
                                                            : tools::PrecisionSearch::Mode::kBisect;
    search.direction = args.get_or("direction", "forward") == "reverse" ? tools::PrecisionSearch::Direction::kReverse
                                                                        : tools::PrecisionSearch::Direction::kForward;
    const compare::Tolerances tolerances = tolerance_args_.parse(args);
    search.atol = tolerances.atol.value_or(search.atol);
    search.rtol = tolerances.rtol.value_or(search.rtol);
    const options::DataLoaderOptions data = data_loader_args_.parse(args);
    const options::IterationOptions iterations = iteration_args_.parse(args);
    const tools::report::ReportOptions report_options = report_args_.parse(args);
    const tools::debug::PlanCheckSettings plan_check = plan_check_args_.parse(args);
    if (const auto& check = plan_check.check)
      search.judge = tools::debug::plan_check_judge(*check, plan_check.iter_artifact, args.get_or("model", ""),
                                                    plan_check.show_output,
                                                    [](const std::string& line) { logger().info("    ", line); });
    model::Model model = model_edit::load_input(args);
    const std::string base_dir = std::filesystem::path(args.get_or("model", "")).parent_path().string();

    std::vector<TensorMap> feeds;
    {
      runtime::Session probe = runtime::Session::create(model.proto(), {}, base_dir).value();
      std::unique_ptr<compare::FeedSource> source = compare::make_feed_source(data, iterations.iterations);
      source->set_input_metadata(probe.input_metadata());
      for (size_t i = 0;; ++i) {
        std::optional<TensorMap> feed = source->feed(i);
        if (!feed) break;
        feeds.push_back(std::move(*feed));
      }
    }
    const std::string type = search.reduced == DType::kBFloat16 ? "bf16" : "fp16";
    if (search.judge)
      logger().info("Searching the layers of ", args.get_or("model", ""), " that must run in fp32 (", type,
                    " plan, judged by --check)");
    else
      logger().info("Searching the layers of ", args.get_or("model", ""), " that must run in fp32 (", type, " plan, ",
                    feeds.size(), " feed(s), atol ", search.atol, " rtol ", search.rtol, ")");
    const tools::PrecisionSearchResult result = tools::search_fp32_layers(
        model.proto(), base_dir, feeds, search, [](const std::string& line) { logger().info("  ", line); });
    if (report_options.path) write_report(*report_options.path, args, type, search, result);
    if (result.passes_reduced) {
      logger().info("PASSED | the ", type, " plan passes with every layer in ", type, " (", result.builds, " build)");
      return kExitPassed;
    }
    if (!result.passes_fp32) {
      logger().error("FAILED | the plan fails even with every layer in fp32: precision is not the cause");
      return kExitFailed;
    }
    std::string names, flags;
    for (const auto& l : result.fp32_layers) {
      names += (names.empty() ? "" : ", ") + l;
      flags += " " + l + ":fp32";
    }
    logger().info("Layers that must run in fp32 (", result.fp32_layers.size(), ", found in ", result.builds,
                  " builds): ", names);
    logger().info("PASSED | build the plan with: parity convert MODEL -o X.plan --", type,
                  " --precision-constraints obey --layer-precisions", flags);
    return kExitPassed;
  }

 private:
  tools::debug::PlanCheckArgs plan_check_args_{"polygraphy_debug.plan"};
  compare::ToleranceArgs tolerance_args_{"of the output check", "1e-3", "1e-3"};
  static void write_report(const std::string& path, const options::Args& args, const std::string& type,
                           const tools::PrecisionSearch& search, const tools::PrecisionSearchResult& result) {
    tools::report::PrecisionSummary summary;
    summary.model = args.get_or("model", "");
    summary.reduced_type = type;
    summary.mode = args.get_or("mode", "bisect");
    summary.direction = args.get_or("direction", "forward");
    summary.atol = search.atol;
    summary.rtol = search.rtol;
    summary.layers = result.layers;
    for (const auto& b : result.history) summary.steps.push_back({b.fp32_layers, b.passed, b.seconds});
    summary.passes_reduced = result.passes_reduced;
    summary.passes_fp32 = result.passes_fp32;
    summary.fp32_layers = result.fp32_layers;
    tools::report::Report page("parity debug precision: " + std::filesystem::path(summary.model).filename().string(),
                               current_command_line());
    page.add_section(tools::report::precision_section(summary));
    page.write(path);
    logger().info("Wrote report ", path);
  }

  tools::report::ReportArgs report_args_{"every plan built: layers kept in fp32, verdict, time; the layers that must stay fp32"};
  options::DataLoaderArgs data_loader_args_;
  options::IterationArgs iteration_args_{{.iterations = 1, .iterations_help = "Feeds each candidate plan is checked on"}};
};

PARITY_REGISTER_COMMAND(DebugPrecisionCommand);

}  // namespace
}  // namespace parity::cli
