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
#include "runners/ref/ref_runner.h"
#include "runners/registry.h"
#include "runtime/plan/plan_file.h"
#include "tools/plan_build.h"
#include "tools/plan_build_args.h"

namespace parity::tools {
namespace {

void add_plan_runner_options(options::ArgParser& parser) {
  parser.group("Engine runner (--plan): build options, as `parity convert -o X.plan` takes them");
  PlanBuildArgs().add_to(parser);
  parser.add({.flags = {"--save-engine"},
              .help = "Save the plan --plan builds (any file name: the file's header says it is a plan)",
              .metavar = "PATH"});
}

int thread_count(const options::Args& args) {
  const int64_t threads = args.get_int("threads").value_or(1);
  PARITY_CHECK(threads >= 1 && threads <= 1024, kInvalidArgument, "--threads must be between 1 and 1024, got ", threads);
  return static_cast<int>(threads);
}

// A plan file: loaded as it is (its build options were fixed when it was built).
compare::loaders::PlanLoader load_built_plan(const std::string& path, const options::Args& args,
                                             const PlanBuildSettings& settings) {
  PARITY_CHECK(!settings.requested, kInvalidArgument, "'", path,
               "' is a plan, built already: the build options (--fp16, --int8, --trt-min-shapes, ...) apply when "
               "--plan builds from an ONNX model");
  compare::loaders::PlanLoader plan = compare::loaders::PlanFromPath(path, thread_count(args));
  if (auto save = args.get("save_engine")) plan = compare::loaders::SavePlan(std::move(plan), *save);
  return plan;
}

// An ONNX model: built on activation, with the run's data loader feeding int8 calibration (as
// Polygraphy calibrates on the data it runs).
compare::loaders::PlanLoader build_from_onnx(const std::string& path, const options::Args& args,
                                             const PlanBuildSettings& settings) {
  const options::DataLoaderOptions data = options::DataLoaderArgs().parse(args);
  const int64_t iterations = args.get_int("iterations").value_or(1);
  PlanBuildOptions build = plan_build_options(settings, {});
  // Without profiles the plan is built at the --input-shapes the run feeds; with profiles those
  // shapes are the run's, inside the profile.
  const bool fix_shapes = build.profiles.empty();
  build.calibration_feeds = [data, iterations] { return compare::make_feed_source(data, iterations); };
  const std::optional<std::string> save = args.get("save_engine");
  const int threads = thread_count(args);
  return [path, data, build, fix_shapes, save, threads, settings]() -> compare::loaders::Plan {
    logger().info("Building plan: ", path);
    model::Model model = model::load_model(path).value();
    if (fix_shapes) fix_input_shapes(model.proto(), data.input_shapes);
    PlanBuildOptions options = build;
    options.threads = threads;
    BuiltPlan built = build_plan(model, std::filesystem::path(path).parent_path(), std::move(options));
    logger().info("Built plan in ", built.build_seconds, " s; layers: ", layer_precision_summary(built.session));
    save_build_files(settings, built.session);
    if (save) {
      runtime::plan::save_plan(built.session, *save, recorded_source_model(path, *save), built.build_seconds);
      logger().info("Saved plan to: ", *save);
    }
    return std::make_shared<const runtime::Session>(std::move(built.session));
  };
}

const runners::RunnerRegistrar kPlanRunner({
    .name = "plan",
    .flag = "--plan",
    .description = "parity's engine: the ref runtime's plan, built with convert's build options (--fp16, --int8, "
                   "...) or loaded from a plan file",
    .add_options = add_plan_runner_options,
    .availability = [](const options::Args*) { return Status::ok(); },
    .version = [](const options::Args*) { return std::string("parity-plan"); },
    .create =
        [](const runners::RunnerConfig& config) -> std::unique_ptr<runners::Runner> {
          static const options::Args kNoOptions;
          const options::Args& args = config.args ? *config.args : kNoOptions;
          // Built from the C++ API (no command line): the build options' defaults.
          const PlanBuildSettings settings = config.args ? PlanBuildArgs().parse(args) : PlanBuildSettings{};
          compare::loaders::PlanLoader plan = runtime::plan::is_plan_file(config.model_path)
                                                  ? load_built_plan(config.model_path, args, settings)
                                                  : build_from_onnx(config.model_path, args, settings);
          auto runner = compare::loaders::RunnerFromPlan(std::move(plan), runners::make_runner_name("plan"));
          if (auto index = args.get_int("profile_index")) {
            PARITY_CHECK(*index >= 0 && *index < 1024, kInvalidArgument, "--profile-index must be 0 or more, got ",
                         *index);
            static_cast<runners::RefRunner&>(*runner).set_profile_index(static_cast<int>(*index));
          }
          return runner;
        },
    // A build per model: "every runner" defaults (inspect capability) leave it out.
    .selected_by_default = false,
    .reads_plans = true,
    .listing_order = 1,
});

}  // namespace
}  // namespace parity::tools
