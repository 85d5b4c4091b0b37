// The in-line engine runner, `run M.onnx --plan [--fp16|--int8 ...] --ort`: Polygraphy's
// `--trt` for parity. On an ONNX model it builds parity's engine (a plan of the ref runtime) with
// the build options `convert -o X.plan` takes (PlanBuildArgs) when activated, optionally saving it
// (--save-engine); on a plan file (whatever its name) it loads it. Registered from tools/ because
// a build calibrates int8 on the data loader's feeds (compare/) with tools/calibration.
#include <filesystem>

#include "compare/feed_files.h"
#include "compare/plan_loaders.h"
#include "core/logger.h"
#include "model/model.h"
#include "options/data_loader_args.h"
#include "tools/plan_runner.h"
#include "runners/ref/ref_runner.h"
#include "runners/registry.h"
#include "runtime/plan/plan_file.h"
#include "tools/plan_build.h"
#include "tools/plan_build_args.h"

namespace parity::tools {
namespace {

// The engine runner's own options: the build options and --save-engine.
struct PlanRunnerSettings {
  PlanBuildSettings build;
  std::optional<std::string> save_engine;
};

options::Group<PlanRunnerSettings> plan_runner_options() {
  options::Group<PlanRunnerSettings> group;
  group.section("Engine runner (--plan): build options, as `parity convert -o X.plan` takes them")
      .include(PlanBuildArgs(), &PlanRunnerSettings::build)
      .add({.flags = {"--save-engine"},
            .help = "Save the plan --plan builds (any file name: the file's header says it is a plan)",
            .metavar = "PATH"},
           options::field(&PlanRunnerSettings::save_engine));
  return group;
}

// A plan file: loaded as it is (its build options were fixed when it was built).
compare::loaders::PlanLoader load_built_plan(const std::string& path, const PlanRunnerSettings& settings,
                                             int threads) {
  PARITY_CHECK(!settings.build.requested, kInvalidArgument, "'", path,
               "' is a plan, built already: the build options (--fp16, --int8, --trt-min-shapes, ...) apply when "
               "--plan builds from an ONNX model");
  compare::loaders::PlanLoader plan = compare::loaders::PlanFromPath(path, threads);
  if (settings.save_engine) plan = compare::loaders::SavePlan(std::move(plan), *settings.save_engine);
  return plan;
}

// An ONNX model: built on activation, with the run's data loader feeding int8 calibration (as
// Polygraphy calibrates on the data it runs).
compare::loaders::PlanLoader build_from_onnx(const std::string& path, const PlanRunnerSettings& settings, int threads,
                                             const options::DataLoaderOptions& data, int64_t iterations) {
  PlanBuildOptions build = plan_build_options(settings.build, {});
  // Without profiles the plan is built at the --input-shapes the run feeds; with profiles those
  // shapes are the run's, inside the profile.
  const bool fix_shapes = build.profiles.empty();
  build.calibration_feeds = [data, iterations] { return compare::make_feed_source(data, iterations); };
  return [path, data, build, fix_shapes, threads, settings]() -> compare::loaders::Plan {
    logger().info("Building plan: ", path);
    model::Model model = model::load_model(path).value();
    if (fix_shapes) fix_input_shapes(model.proto(), data.input_shapes);
    PlanBuildOptions options = build;
    options.threads = threads;
    BuiltPlan built = build_plan(model, std::filesystem::path(path).parent_path(), std::move(options));
    logger().info("Built plan in ", built.build_seconds, " s; layers: ", layer_precision_summary(built.session));
    save_build_files(settings.build, built.session);
    if (settings.save_engine) {
      runtime::plan::save_plan(built.session, *settings.save_engine, recorded_source_model(path, *settings.save_engine),
                               built.build_seconds);
      logger().info("Saved plan to: ", *settings.save_engine);
    }
    return std::make_shared<const runtime::Session>(std::move(built.session));
  };
}

std::unique_ptr<runners::Runner> create_plan_runner(const runners::RunnerConfig& config) {
  const auto settings = config.options.get_or(PlanRunnerSettings{});
  // The ref runner's --threads and --profile-index serve the engine it runs on.
  const auto ref = config.options.get_or(runners::RefRunnerOptions{});
  // The command's data loader (PlanRunnerFeeds), when it has one, calibrates an int8 build.
  const auto feeds = config.options.get_or(PlanRunnerFeeds{});
  compare::loaders::PlanLoader plan =
      runtime::plan::is_plan_file(config.model_path)
          ? load_built_plan(config.model_path, settings, ref.threads)
          : build_from_onnx(config.model_path, settings, ref.threads, feeds.data, feeds.iterations);
  auto runner = compare::loaders::RunnerFromPlan(std::move(plan), runners::make_runner_name("plan"));
  if (ref.profile_index) static_cast<runners::RefRunner&>(*runner).set_profile_index(*ref.profile_index);
  return runner;
}

const runners::RunnerRegistrar kPlanRunner({
    .name = "plan",
    .flag = "--plan",
    .description = "parity's engine: the ref runtime's plan, built with convert's build options (--fp16, --int8, "
                   "...) or loaded from a plan file",
    .options = plan_runner_options(),
    .availability = [](const runners::RunnerOptions&) { return Status::ok(); },
    .version = [](const runners::RunnerOptions&) { return std::string("parity-plan"); },
    .create = create_plan_runner,
    // A build per model: "every runner" defaults (inspect capability) leave it out.
    .selected_by_default = false,
    .reads_plans = true,
    .listing_order = 1,
});

}  // namespace
}  // namespace parity::tools
