#include "tools/plan_build_args.h"

#include <map>
#include <set>

#include "core/formats/file_io.h"
#include "core/logger.h"
#include "runners/kernel_environment.h"
#include "runtime/profiles.h"
#include "runtime/reduced_precision.h"
#include "runtime/subgraph.h"
#include "runtime/tactics.h"

namespace parity::tools {

namespace {

using options::Given;
using S = PlanBuildSettings;

// A build option: given, it asks for a plan (convert -o X without an extension writes one).
template <class Bind>
options::Group<S>::Bind requesting(Bind bind) {
  return [bind](S& s, const Given& given) {
    bind(s, given);
    if (given.given()) s.requested = true;
  };
}

std::vector<runtime::OptimizationProfile> parse_profile_options(const S& s,
                                                               const std::vector<options::InputShape>& fixed) {
  const bool trt = !s.trt_min_shapes.empty() || !s.trt_opt_shapes.empty() || !s.trt_max_shapes.empty();
  PARITY_CHECK(!(trt && !s.profiles.empty()), kInvalidArgument,
               "--profile and --trt-min/opt/max-shapes both give profiles: use one spelling");
  std::vector<runtime::OptimizationProfile> profiles =
      trt ? runtime::profiles_from_min_opt_max(s.trt_min_shapes, s.trt_opt_shapes, s.trt_max_shapes)
          : runtime::parse_profiles(s.profiles, "--profile");
  for (const auto& profile : profiles)
    for (const auto& shape : fixed)
      PARITY_CHECK(!profile.find(shape.input), kInvalidArgument, "input '", shape.input,
                   "' has both --input-shapes and a profile: give its range in the profile only");
  return profiles;
}

runtime::TacticOptions parse_tactic_options(const S& s) {
  runtime::TacticOptions tactics;
  const std::string& load_cache = s.load_timing_cache;
  tactics.time = s.time_tactics || !load_cache.empty() || s.save_timing_cache.has_value();
  if (tactics.time) tactics.cache = std::make_shared<runtime::TimingCache>();
  if (!load_cache.empty()) {
    *tactics.cache = runtime::TimingCache::from_json(formats::read_binary_file(load_cache), "timing cache '" + load_cache + "'");
    logger().info("Loaded ", tactics.cache->size(), " kernel times from ", load_cache);
  }
  if (s.tactic_sources) {
    std::set<std::string> allowed;
    for (const auto& family : *s.tactic_sources) {
      PARITY_CHECK(family == "optimized" || family == "reference", kInvalidArgument, "--tactic-sources: '", family,
                   "' is not optimized or reference");
      allowed.insert(family);
    }
    for (const char* family : {"optimized", "reference"})
      if (!allowed.count(family)) tactics.forbidden.push_back(family);
  }
  if (const auto& path = s.load_tactics)
    tactics.replay = runtime::tactics_from_json(formats::read_binary_file(*path), "tactics file '" + *path + "'");
  return tactics;
}

// Node key -> tactic of every layer the plan runs.
std::map<std::string, std::string> plan_tactics(const runtime::Session& session) {
  std::map<std::string, std::string> tactics;
  for (const auto& node : session.plan().nodes_)
    if (!node.folded) tactics[runtime::tactic_node_key(node.kernel_spec)] = node.tactic;
  return tactics;
}

void save_tactic_files(const S& s, const runtime::Session& session) {
  if (const auto& path = s.save_tactics) {
    formats::write_binary_file(*path, runtime::tactics_to_json(plan_tactics(session)));
    logger().info("Saved tactics to: ", *path);
  }
  const auto& cache = session.options().tactics.cache;
  if (cache) logger().info("Tactic timing: ", cache->misses(), " kernels timed, ", cache->hits(), " times from the cache");
  if (const auto& path = s.save_timing_cache) {
    formats::write_binary_file(*path, cache->to_json());
    logger().info("Saved timing cache (", cache->size(), " times) to: ", *path);
  }
}

runtime::ReducedPrecisionConfig parse_precision_options(const S& s) {
  runtime::ReducedPrecisionConfig config;
  config.fp16 = s.fp16;
  config.bf16 = s.bf16;
  config.int8 = s.int8;
  PARITY_CHECK(!(config.fp16 && config.bf16), kInvalidArgument,
               "--fp16 and --bf16 together: choose one reduced float type");
  for (const auto& item : s.layer_precisions) {
    const size_t colon = item.rfind(':');
    PARITY_CHECK(colon != std::string::npos && colon > 0, kInvalidArgument, "--layer-precisions: '", item,
                 "' is not NAME:PRECISION");
    const auto p = runtime::parse_precision(item.substr(colon + 1));
    PARITY_CHECK(p.has_value(), kInvalidArgument, "--layer-precisions: '", item,
                 "': the precision must be fp32, fp16, bf16 or int8");
    config.layer_precisions[item.substr(0, colon)] = *p;
  }
  const std::string& constraints = s.precision_constraints;
  if (constraints == "obey") config.constraints = runtime::PrecisionConstraints::kObey;
  else if (constraints == "prefer") config.constraints = runtime::PrecisionConstraints::kPrefer;
  else if (constraints == "none") config.constraints = runtime::PrecisionConstraints::kNone;
  else fail(ErrorCode::kInvalidArgument, "--precision-constraints: '", constraints, "' is not obey, prefer or none");
  if (config.constraints == runtime::PrecisionConstraints::kNone && !config.layer_precisions.empty())
    logger().warning("--layer-precisions are ignored with --precision-constraints none");
  return config;
}

}  // namespace

PlanBuildArgs::PlanBuildArgs() {
  add({.flags = {"--isa"},
       .help = "Highest vector ISA of the ref runtime's kernels and oneDNN (process-wide, set at start-up): "
               "native (default: the CPU's), avx512, avx2 or baseline; a plan records it, and runs on any CPU "
               "that has it",
       .metavar = "ISA", .choices = {"native", "avx512", "avx2", "baseline"}},
      options::field(&S::isa));
  add({.flags = {"--fp16"}, .help = "Let layers run in float16 (fp16 storage between layers, fp32 accumulation)",
       .arity = options::Arity::kFlag},
      requesting(options::field(&S::fp16)));
  add({.flags = {"--bf16"}, .help = "Let layers run in bfloat16 (oneDNN's bf16 convolution where the CPU has it)",
       .arity = options::Arity::kFlag},
      requesting(options::field(&S::bf16)));
  add({.flags = {"--int8"},
       .help = "Let Conv/MatMul/Gemm run in int8, with activation ranges from calibration: the data loader's "
               "inputs (--load-inputs, or random ones per --seed/--val-range/--input-shapes, --iterations "
               "batches) or --calibration-cache",
       .arity = options::Arity::kFlag},
      requesting(options::field(&S::int8)));
  add({.flags = {"--calibration-cache"},
       .help = "int8 calibration cache: read when it exists (no calibration run), else written after calibrating",
       .metavar = "FILE"},
      requesting(options::field(&S::calibration_cache)));
  add({.flags = {"--calibration-algo"},
       .help = "int8 calibrator: minmax (the largest magnitude seen) or entropy (the clipping threshold "
               "that loses least information, as TensorRT's entropy calibrator)",
       .choices = {"minmax", "entropy"}, .default_value = "minmax"},
      requesting(options::field(&S::calibration_algorithm)));
  add({.flags = {"--layer-precisions"},
       .help = "Per-layer precision, NAME:PRECISION with PRECISION one of fp32, fp16, bf16, int8",
       .metavar = "NAME:PRECISION", .arity = options::Arity::kOneOrMore},
      requesting(options::field(&S::layer_precisions)));
  add({.flags = {"--precision-constraints"},
       .help = "obey: a layer that cannot run in its --layer-precisions precision fails the build; prefer "
               "(default): it falls back, with a warning; none: --layer-precisions are ignored",
       .metavar = "obey|prefer|none"},
      requesting(options::field(&S::precision_constraints)));
  add({.flags = {"--time-tactics"},
       .help = "Time every kernel variant (tactic) of each node whose input shapes are static (fix them with "
               "--input-shapes) and keep the fastest",
       .arity = options::Arity::kFlag},
      requesting(options::field(&S::time_tactics)));
  add({.flags = {"--load-timing-cache"}, .help = "Reuse the kernel times of earlier builds (implies --time-tactics)",
       .metavar = "FILE"},
      requesting(options::field(&S::load_timing_cache)));
  add({.flags = {"--save-timing-cache"},
       .help = "Write the kernel times known after this build (implies --time-tactics)", .metavar = "FILE"},
      requesting(options::field(&S::save_timing_cache)));
  add({.flags = {"--save-tactics", "--save-tactic-replay"}, .dest = "save_tactics", .help = "Write the tactic chosen per node (JSON), for --load-tactics",
       .metavar = "FILE"},
      requesting(options::field(&S::save_tactics)));
  add({.flags = {"--load-tactics", "--load-tactic-replay"}, .dest = "load_tactics",
       .help = "Replay the tactics of a --save-tactics file: each node named there gets that tactic or the "
               "build fails",
       .metavar = "FILE"},
      requesting(options::field(&S::load_tactics)));
  add({.flags = {"--tactic-sources"},
       .help = "Kernel families a node may use: optimized, reference (default both); a node always keeps "
               "its reference kernel",
       .metavar = "FAMILY", .arity = options::Arity::kOneOrMore},
      requesting([](S& s, const Given& given) {
        if (given.given()) s.tactic_sources = given.values;
      }));
  add({.flags = {"--profile"},
       .help = "Optimization profile: INPUT:[MIN],[OPT],[MAX] per dynamic input (e.g. x:[1,3,48,64],[1,3,48,320],"
               "[1,3,48,1024]); tactics are timed at OPT, memory planned for MAX, and runs outside every "
               "profile are refused. An input named again starts the next profile",
       .metavar = "INPUT:[MIN],[OPT],[MAX]", .arity = options::Arity::kOneOrMore},
      requesting(options::field(&S::profiles)));
  add({.flags = {"--trt-min-shapes"},
       .help = "Polygraphy's spelling of profiles: the min shapes (INPUT:[d0,...]); the k-th shape of an "
               "input in --trt-min/opt/max-shapes belongs to profile k",
       .metavar = "INPUT:[SHAPE]", .arity = options::Arity::kOneOrMore},
      requesting(options::field(&S::trt_min_shapes)));
  add({.flags = {"--trt-opt-shapes"}, .help = "The opt shapes (see --trt-min-shapes)", .metavar = "INPUT:[SHAPE]",
       .arity = options::Arity::kOneOrMore},
      requesting(options::field(&S::trt_opt_shapes)));
  add({.flags = {"--trt-max-shapes"}, .help = "The max shapes (see --trt-min-shapes)", .metavar = "INPUT:[SHAPE]",
       .arity = options::Arity::kOneOrMore},
      requesting(options::field(&S::trt_max_shapes)));
}

PlanBuildOptions plan_build_options(const PlanBuildSettings& settings, const std::vector<options::InputShape>& fixed) {
  PlanBuildOptions build;
  build.precision = parse_precision_options(settings);
  build.tactics = parse_tactic_options(settings);
  build.profiles = parse_profile_options(settings, fixed);
  build.calibration_cache = settings.calibration_cache;
  build.calibration_algorithm = settings.calibration_algorithm;
  build.kernel_options = runners::kernel_options_from_environment();
  if (settings.isa) build.kernel_options = runners::with_isa_cap(build.kernel_options, *settings.isa);
  return build;
}

void save_build_files(const PlanBuildSettings& settings, const runtime::Session& session) {
  save_tactic_files(settings, session);
}

void fix_input_shapes(onnx::ModelProto& model, const std::vector<options::InputShape>& shapes) {
  for (const auto& s : shapes) {
    onnx::ValueInfoProto* input = nullptr;
    for (auto& in : *model.mutable_graph()->mutable_input())
      if (in.name() == s.input) input = &in;
    PARITY_CHECK(input != nullptr, kInvalidArgument, "--input-shapes: the model has no input '", s.input, "'");
    auto* shape = input->mutable_type()->mutable_tensor_type()->mutable_shape();
    PARITY_CHECK(shape->dim_size() == 0 || shape->dim_size() == static_cast<int>(s.shape.size()), kInvalidArgument,
                 "--input-shapes: '", s.text, "' has rank ", s.shape.size(), " but input '", s.input, "' has rank ",
                 shape->dim_size());
    for (int d = 0; d < shape->dim_size(); ++d)
      PARITY_CHECK(!shape->dim(d).has_dim_value() || shape->dim(d).dim_value() == s.shape[d], kInvalidArgument,
                   "--input-shapes: '", s.text, "' contradicts input '", s.input, "' dimension ", d, " (",
                   shape->dim(d).dim_value(), ")");
    shape->clear_dim();
    for (int64_t d : s.shape) shape->add_dim()->set_dim_value(d);
  }
}

}  // namespace parity::tools
