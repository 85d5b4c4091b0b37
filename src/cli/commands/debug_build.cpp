// `parity debug build MODEL --until N`: rebuilds with different tactic choices and sorts the
// builds into good/ and bad/ by a check against the ONNX model on the reference kernels
// (Polygraphy's debug build); `parity inspect diff-tactics --dir` then names the suspects.
#include "cli/command.h"
#include "cli/commands/model_edit_common.h"
#include "compare/compare_args.h"
#include "compare/feed_files.h"
#include "core/logger.h"
#include "core/text.h"
#include "options/data_loader_args.h"
#include "runtime/session.h"
#include "tools/debug/plan_check.h"
#include "tools/debug_build.h"
#include "tools/plan_build_args.h"

namespace parity::cli {
namespace {

class DebugBuildCommand final : public Command {
 public:
  std::string name() const override { return "debug build"; }
  std::string summary() const override {
    return "Rebuild a plan with varied tactics and sort the builds into good/ and bad/ by their outputs";
  }
  void add_options(options::ArgParser& parser) override {
    model_edit::add_model_argument(parser);
    parser.group("Builds");
    parser.add({.flags = {"--until"}, .help = "How many builds", .metavar = "N", .default_value = "5"});
    parser.add({.flags = {"--artifacts-dir", "--dir"}, .dest = "artifacts_dir",
                .help = "Where good/ and bad/ tactics files are written", .metavar = "DIR", .default_value = "polygraphy_artifacts"});
    parser.add({.flags = {"--check-ref"},
                .help = "Check each build against the ONNX model on the reference kernels (the default without "
                        "--check)",
                .arity = options::Arity::kFlag});
    tolerance_args_.add_to(parser);
    data_loader_args_.add_to(parser);
    parser.group("Plan build (as `parity convert -o X.plan` builds it)");
    plan_build_args_.add_to(parser);
    plan_check_args_.add_to(parser);
  }

  int run(const options::Args& args) override {
    tools::DebugBuildOptions options;
    options.builds = static_cast<int>(parse_int(args.get_or("until", "5"), "--until"));
    PARITY_CHECK(options.builds >= 1, kInvalidArgument, "--until must be at least 1, got ", options.builds);
    const compare::Tolerances tolerances = tolerance_args_.parse(args);
    options.atol = tolerances.atol.value_or(options.atol);
    options.rtol = tolerances.rtol.value_or(options.rtol);
    options.artifacts = args.get_or("artifacts_dir", "polygraphy_artifacts");
    const tools::debug::PlanCheckSettings plan_check = plan_check_args_.parse(args);
    if (const auto& check = plan_check.check) {
      PARITY_CHECK(!args.flag("check_ref"), kInvalidArgument, "give either --check CMD... or --check-ref, not both");
      options.judge = tools::debug::plan_check_judge(*check, plan_check.iter_artifact, args.get_or("model", ""),
                                                     plan_check.show_output,
                                                     [](const std::string& line) { logger().info("    ", line); });
    }
    const options::DataLoaderOptions data = data_loader_args_.parse(args);
    const tools::PlanBuildSettings build = plan_build_args_.parse(args);
    if (build.requested || build.isa) options.plan = tools::plan_build_options(build, data.input_shapes);
    model::Model model = model_edit::load_input(args);
    if (options.plan) tools::fix_input_shapes(model.proto(), data.input_shapes);
    const std::string base_dir = std::filesystem::path(args.get_or("model", "")).parent_path().string();
    std::vector<TensorMap> feeds;
    {
      runtime::Session probe = runtime::Session::create(model.proto(), {}, base_dir).value();
      std::unique_ptr<compare::FeedSource> source = compare::make_feed_source(data, 1);
      source->set_input_metadata(probe.input_metadata());
      for (size_t i = 0;; ++i) {
        std::optional<TensorMap> feed = source->feed(i);
        if (!feed) break;
        feeds.push_back(std::move(*feed));
      }
    }
    if (options.plan) options.plan->calibration_feeds = [&] { return compare::make_feed_source(data, 1); };
    const tools::DebugBuildResult result = tools::debug_build(model.proto(), base_dir, feeds, options,
                                                              [](const std::string& line) { logger().info("  ", line); });
    logger().info(result.good, " good and ", result.bad, " bad build(s); see which tactics only bad builds use with: "
                  "parity inspect diff-tactics --dir ", options.artifacts.string());
    return kExitPassed;
  }

 private:
  compare::ToleranceArgs tolerance_args_{"of the check", "1e-5", "1e-5"};
  tools::PlanBuildArgs plan_build_args_;
  tools::debug::PlanCheckArgs plan_check_args_{"polygraphy_debug.plan"};
  options::DataLoaderArgs data_loader_args_;
};

PARITY_REGISTER_COMMAND(DebugBuildCommand);

}  // namespace
}  // namespace parity::cli
