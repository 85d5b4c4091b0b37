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

int parse_profile_index(const std::string& text, const std::string& flag) {
  const int64_t index = parse_int(text, flag);
  PARITY_CHECK(index >= 0 && index < 1024, kInvalidArgument, flag, " must be 0 or more, got ", text);
  return static_cast<int>(index);
}

runtime::SessionOptions RefRunnerOptions::session_options() const {
  runtime::SessionOptions options;
  options.kernel_options = kernel_options_from_environment();
  if (isa) options.kernel_options = with_isa_cap(options.kernel_options, *isa);
  options.threads = threads;
  options.precision = precision;
  options.kernels = kernels;
  options.fuse = fuse;
  options.winograd = winograd;
  options.reduced_floats = reduced_floats;
  return options;
}

namespace {

options::Group<RefRunnerOptions> ref_options() {
  using O = RefRunnerOptions;
  options::Group<O> group;
  group.section("ref runner")
      .add({.flags = {"--threads"}, .help = "Threads for the ref runner's kernels (default 1)", .metavar = "N"},
           options::convert(&O::threads, [](const std::string& text, const std::string& flag) {
             return parse_thread_count(text, flag);
           }))
      .add({.flags = {"--precision"},
            .help = "ref runner precision: fp32 (model dtypes) or fp64 (oracle: all floating math in double; outputs "
                    "in the model's dtypes)",
            .metavar = "P",
            .choices = {"fp32", "fp64"}},
           options::choice(&O::precision,
                           {{"fp32", runtime::Precision::kFloat32}, {"fp64", runtime::Precision::kFloat64}}))
      .add({.flags = {"--kernels"},
            .help = "ref runner kernels: optimized (default; reference where an op has no optimized kernel) or "
                    "reference (the readable oracle kernels only; fp64 always uses them)",
            .metavar = "TIER",
            .choices = {"optimized", "reference"}},
           options::choice(&O::kernels,
                           {{"optimized", runtime::KernelTier::kOptimized}, {"reference", runtime::KernelTier::kReference}}))
      .add({.flags = {"--profile-index", "--optimization-profile"}, .dest = "profile_index",
            .help = "ref runner, plans with several optimization profiles: the profile every run uses (default: the "
                    "first that the input shapes fit)",
            .metavar = "N"},
           options::convert(&O::profile_index, parse_profile_index))
      .add({.flags = {"--no-fusion"},
            .help = "ref runner: do not fuse activations into the optimized kernel producing their input",
            .arity = options::Arity::kFlag},
           options::unless(&O::fuse))
      .add({.flags = {"--no-winograd"},
            .help = "ref runner: sum every convolution directly; by default fp32 3x3 stride-1 convolutions use "
                    "Winograd's algorithm (about twice as fast; round-off of the order of the direct sum's)",
            .arity = options::Arity::kFlag},
           options::unless(&O::winograd))
      .add({.flags = {"--reduced-floats"},
            .help = "ref runner, float16/bfloat16 models on the optimized kernels: carry-fp32 (default; weights "
                    "converted once, values carried as float32 between layers, rounded where the model casts; "
                    "inputs and outputs keep their dtypes) or strict (every layer computes in the model's type and "
                    "rounds its output, as the reference kernels do)",
            .metavar = "MODE",
            .choices = {"carry-fp32", "strict"}},
           options::choice(&O::reduced_floats, {{"carry-fp32", runtime::ReducedFloatCompute::kCarryFloat32},
                                                {"strict", runtime::ReducedFloatCompute::kStrict}}))
      // The build options' --isa (the plan runner's group declares it) caps ref's kernels too.
      .borrow({.flags = {"--isa"}}, options::field(&O::isa));
  return group;
}

RunnerRegistrar register_ref({
    .name = "ref",
    .flag = "--ref",
    // Polygraphy's CPU reference runner; parity's reference runtime plays its part.
    .aliases = {"--pluginref"},
    .description = "parity's own reference ONNX executor (fp32, or fp64 oracle with --precision fp64)",
    .options = ref_options(),
    .availability = [](const RunnerOptions&) { return Status::ok(); },
    .version = [](const RunnerOptions&) { return std::string("parity-ref"); },
    .create =
        [](const RunnerConfig& config) -> std::unique_ptr<Runner> {
          const RefRunnerOptions own = config.options.get_or(RefRunnerOptions{});
          auto runner = std::make_unique<RefRunner>(config.model_path, own.session_options());
          if (own.profile_index) runner->set_profile_index(*own.profile_index);
          return runner;
        },
    .set_threads = set_threads_in(&RefRunnerOptions::threads),
    .reads_plans = true,  // Session::create reads a plan file by its header
    .listing_order = 0,
});

}  // namespace

}  // namespace parity::runners
