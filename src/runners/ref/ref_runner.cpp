#include "runners/ref/ref_runner.h"

#include <thread>

#include "runners/kernel_environment.h"
#include "runners/registry.h"

namespace parity::runners {

RefRunner::RefRunner(std::string model_path, runtime::SessionOptions options, std::string name)
    : Runner(name.empty() ? make_runner_name("ref") : std::move(name)),
      model_path_(std::move(model_path)),
      options_(options) {}

RefRunner::RefRunner(std::function<std::shared_ptr<const runtime::Session>()> load, std::string name)
    : Runner(name.empty() ? make_runner_name("ref") : std::move(name)), load_(std::move(load)) {}

const runtime::Session& RefRunner::session() const {
  PARITY_CHECK(session_, kInvalidArgument, "runner ", this->name(), " is not active");
  return *session_;
}

void RefRunner::activate_impl() {
  if (load_) {
    session_ = load_();
    PARITY_CHECK(session_, kInvalidArgument, "runner ", name(), ": its session loader returned nothing");
    return;
  }
  session_ = std::make_shared<const runtime::Session>(runtime::Session::create(model_path_, options_).value());
}

void RefRunner::deactivate_impl() { session_.reset(); }

TensorMetadata RefRunner::input_metadata_impl() { return session().input_metadata(); }

TensorMap RefRunner::infer_impl(const TensorMap& feed) {
  if (profile_index_ < 0) return session().run(feed, run_options_);
  runtime::RunOptions options = run_options_;
  options.profile_index = profile_index_;
  return session().run(feed, options);
}

namespace {

runtime::SessionOptions options_from_args(const options::Args* args) {
  runtime::SessionOptions options;
  options.kernel_options = kernel_options_from_environment();
  if (!args) return options;
  if (auto isa = args->get("isa")) options.kernel_options = with_isa_cap(options.kernel_options, *isa);
  if (auto threads = args->get_int("threads")) {
    PARITY_CHECK(*threads >= 1 && *threads <= 1024, kInvalidArgument, "--threads must be between 1 and 1024, got ",
                 *threads);
    options.threads = static_cast<int>(*threads);
  }
  const std::string precision = args->get_or("precision", "fp32");
  PARITY_CHECK(precision == "fp32" || precision == "fp64", kInvalidArgument,
               "--precision must be fp32 or fp64, got '", precision, "'");
  options.precision = precision == "fp64" ? runtime::Precision::kFloat64 : runtime::Precision::kFloat32;
  const std::string kernels = args->get_or("kernels", "optimized");
  PARITY_CHECK(kernels == "optimized" || kernels == "reference", kInvalidArgument,
               "--kernels must be optimized or reference, got '", kernels, "'");
  options.kernels = kernels == "reference" ? runtime::KernelTier::kReference : runtime::KernelTier::kOptimized;
  options.fuse = !args->has("no_fusion");
  options.winograd = !args->has("no_winograd");
  const std::string reduced = args->get_or("reduced_floats", "carry-fp32");
  PARITY_CHECK(reduced == "carry-fp32" || reduced == "strict", kInvalidArgument,
               "--reduced-floats must be carry-fp32 or strict, got '", reduced, "'");
  options.reduced_floats =
      reduced == "strict" ? runtime::ReducedFloatCompute::kStrict : runtime::ReducedFloatCompute::kCarryFloat32;
  return options;
}

RunnerRegistrar register_ref({
    .name = "ref",
    .flag = "--ref",
    // Polygraphy's CPU reference runner; parity's reference runtime plays its part.
    .aliases = {"--pluginref"},
    .description = "parity's own reference ONNX executor (fp32, or fp64 oracle with --precision fp64)",
    .add_options =
        [](options::ArgParser& parser) {
          parser.group("ref runner");
          parser.add({.flags = {"--threads"}, .help = "Threads for the ref runner's kernels (default 1)", .metavar = "N"});
          parser.add({.flags = {"--precision"},
                      .help = "ref runner precision: fp32 (model dtypes) or fp64 (oracle: all floating math in "
                              "double; outputs in the model's dtypes)",
                      .metavar = "P",
                      .choices = {"fp32", "fp64"}});
          parser.add({.flags = {"--kernels"},
                      .help = "ref runner kernels: optimized (default; reference where an op has no optimized "
                              "kernel) or reference (the readable oracle kernels only; fp64 always uses them)",
                      .metavar = "TIER",
                      .choices = {"optimized", "reference"}});
          parser.add({.flags = {"--profile-index", "--optimization-profile"}, .dest = "profile_index",
                      .help = "ref runner, plans with several optimization profiles: the profile every run uses "
                              "(default: the first that the input shapes fit)",
                      .metavar = "N"});
          parser.add({.flags = {"--no-fusion"},
                      .help = "ref runner: do not fuse activations into the optimized kernel producing their input",
                      .arity = options::Arity::kFlag});
          parser.add({.flags = {"--no-winograd"},
                      .help = "ref runner: sum every convolution directly; by default fp32 3x3 stride-1 convolutions "
                              "use Winograd's algorithm (about twice as fast; round-off of the order of the direct "
                              "sum's)",
                      .arity = options::Arity::kFlag});
          parser.add({.flags = {"--reduced-floats"},
                      .help = "ref runner, float16/bfloat16 models on the optimized kernels: carry-fp32 (default; "
                              "weights converted once, values carried as float32 between layers, rounded where the "
                              "model casts; inputs and outputs keep their dtypes) or strict (every layer computes "
                              "in the model's type and rounds its output, as the reference kernels do)",
                      .metavar = "MODE",
                      .choices = {"carry-fp32", "strict"}});
        },
    .availability = [](const options::Args*) { return Status::ok(); },
    .version = [](const options::Args*) { return std::string("parity-ref"); },
    .create =
        [](const RunnerConfig& config) -> std::unique_ptr<Runner> {
          auto runner = std::make_unique<RefRunner>(config.model_path, options_from_args(config.args));
          if (config.args)
            if (auto index = config.args->get_int("profile_index")) {
              PARITY_CHECK(*index >= 0 && *index < 1024, kInvalidArgument, "--profile-index must be 0 or more, got ",
                           *index);
              runner->set_profile_index(static_cast<int>(*index));
            }
          return runner;
        },
    .reads_plans = true,  // Session::create reads a plan file by its header
    .listing_order = 0,
});

}  // namespace

}  // namespace parity::runners
