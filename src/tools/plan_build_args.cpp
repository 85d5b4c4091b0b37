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

// The dests of every build option (what any_given() looks for).
constexpr const char* kBuildDests[] = {"fp16", "bf16", "int8", "calibration_cache", "layer_precisions",
                                       "precision_constraints", "time_tactics", "load_timing_cache",
                                       "save_timing_cache", "save_tactics", "load_tactics", "tactic_sources",
                                       "profile", "trt_min_shapes", "trt_opt_shapes", "trt_max_shapes"};

std::vector<runtime::OptimizationProfile> parse_profile_options(
    const options::Args& args, const std::vector<options::InputShape>& fixed) {
  const bool trt = args.has("trt_min_shapes") || args.has("trt_opt_shapes") || args.has("trt_max_shapes");
  PARITY_CHECK(!(trt && args.has("profile")), kInvalidArgument,
               "--profile and --trt-min/opt/max-shapes both give profiles: use one spelling");
  std::vector<runtime::OptimizationProfile> profiles =
      trt ? runtime::profiles_from_min_opt_max(args.list("trt_min_shapes"), args.list("trt_opt_shapes"),
                                               args.list("trt_max_shapes"))
          : runtime::parse_profiles(args.list("profile"), "--profile");
  for (const auto& profile : profiles)
    for (const auto& shape : fixed)
      PARITY_CHECK(!profile.find(shape.input), kInvalidArgument, "input '", shape.input,
                   "' has both --input-shapes and a profile: give its range in the profile only");
  return profiles;
}

runtime::TacticOptions parse_tactic_options(const options::Args& args) {
  runtime::TacticOptions tactics;
  const std::string load_cache = args.get_or("load_timing_cache", "");
  tactics.time = args.flag("time_tactics") || !load_cache.empty() || args.has("save_timing_cache");
  if (tactics.time) tactics.cache = std::make_shared<runtime::TimingCache>();
  if (!load_cache.empty()) {
    *tactics.cache = runtime::TimingCache::from_json(formats::read_binary_file(load_cache), "timing cache '" + load_cache + "'");
    logger().info("Loaded ", tactics.cache->size(), " kernel times from ", load_cache);
  }
  if (args.has("tactic_sources")) {
    std::set<std::string> allowed;
    for (const auto& family : args.list("tactic_sources")) {
      PARITY_CHECK(family == "optimized" || family == "reference", kInvalidArgument, "--tactic-sources: '", family,
                   "' is not optimized or reference");
      allowed.insert(family);
    }
    for (const char* family : {"optimized", "reference"})
      if (!allowed.count(family)) tactics.forbidden.push_back(family);
  }
  if (auto path = args.get("load_tactics"))
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

void save_tactic_files(const options::Args& args, const runtime::Session& session) {
  if (auto path = args.get("save_tactics")) {
    formats::write_binary_file(*path, runtime::tactics_to_json(plan_tactics(session)));
    logger().info("Saved tactics to: ", *path);
  }
  const auto& cache = session.options().tactics.cache;
  if (cache) logger().info("Tactic timing: ", cache->misses(), " kernels timed, ", cache->hits(), " times from the cache");
  if (auto path = args.get("save_timing_cache")) {
    formats::write_binary_file(*path, cache->to_json());
    logger().info("Saved timing cache (", cache->size(), " times) to: ", *path);
  }
}

runtime::ReducedPrecisionConfig parse_precision_options(const options::Args& args) {
  runtime::ReducedPrecisionConfig config;
  config.fp16 = args.flag("fp16");
  config.bf16 = args.flag("bf16");
  config.int8 = args.flag("int8");
  PARITY_CHECK(!(config.fp16 && config.bf16), kInvalidArgument,
               "--fp16 and --bf16 together: choose one reduced float type");
  for (const auto& item : args.list("layer_precisions")) {
    const size_t colon = item.rfind(':');
    PARITY_CHECK(colon != std::string::npos && colon > 0, kInvalidArgument, "--layer-precisions: '", item,
                 "' is not NAME:PRECISION");
    const auto p = runtime::parse_precision(item.substr(colon + 1));
    PARITY_CHECK(p.has_value(), kInvalidArgument, "--layer-precisions: '", item,
                 "': the precision must be fp32, fp16, bf16 or int8");
    config.layer_precisions[item.substr(0, colon)] = *p;
  }
  const std::string constraints = args.get_or("precision_constraints", "prefer");
  if (constraints == "obey") config.constraints = runtime::PrecisionConstraints::kObey;
  else if (constraints == "prefer") config.constraints = runtime::PrecisionConstraints::kPrefer;
  else if (constraints == "none") config.constraints = runtime::PrecisionConstraints::kNone;
  else fail(ErrorCode::kInvalidArgument, "--precision-constraints: '", constraints, "' is not obey, prefer or none");
  if (config.constraints == runtime::PrecisionConstraints::kNone && !config.layer_precisions.empty())
    logger().warning("--layer-precisions are ignored with --precision-constraints none");
  return config;
}

}  // namespace

void PlanBuildArgs::add_to(options::ArgParser& parser) const {
  parser.add({.flags = {"--isa"},
              .help = "Highest vector ISA of the ref runtime's kernels and oneDNN (process-wide, set at start-up): "
                      "native (default: the CPU's), avx512, avx2 or baseline; a plan records it, and runs on any CPU "
                      "that has it",
              .metavar = "ISA", .choices = {"native", "avx512", "avx2", "baseline"}});
  parser.add({.flags = {"--fp16"}, .help = "Let layers run in float16 (fp16 storage between layers, fp32 accumulation)",
              .arity = options::Arity::kFlag});
  parser.add({.flags = {"--bf16"}, .help = "Let layers run in bfloat16 (oneDNN's bf16 convolution where the CPU has it)",
              .arity = options::Arity::kFlag});
  parser.add({.flags = {"--int8"},
              .help = "Let Conv/MatMul/Gemm run in int8, with activation ranges from calibration: the data loader's "
                      "inputs (--load-inputs, or random ones per --seed/--val-range/--input-shapes, --iterations "
                      "batches) or --calibration-cache",
              .arity = options::Arity::kFlag});
  parser.add({.flags = {"--calibration-cache"},
              .help = "int8 calibration cache: read when it exists (no calibration run), else written after calibrating",
              .metavar = "FILE"});
  parser.add({.flags = {"--calibration-algo"},
              .help = "int8 calibrator: minmax (the largest magnitude seen) or entropy (the clipping threshold "
                      "that loses least information, as TensorRT's entropy calibrator)",
              .choices = {"minmax", "entropy"}, .default_value = "minmax"});
  parser.add({.flags = {"--layer-precisions"},
              .help = "Per-layer precision, NAME:PRECISION with PRECISION one of fp32, fp16, bf16, int8",
              .metavar = "NAME:PRECISION", .arity = options::Arity::kOneOrMore});
  parser.add({.flags = {"--precision-constraints"},
              .help = "obey: a layer that cannot run in its --layer-precisions precision fails the build; prefer "
                      "(default): it falls back, with a warning; none: --layer-precisions are ignored",
              .metavar = "obey|prefer|none"});
  parser.add({.flags = {"--time-tactics"},
              .help = "Time every kernel variant (tactic) of each node whose input shapes are static (fix them with "
                      "--input-shapes) and keep the fastest",
              .arity = options::Arity::kFlag});
  parser.add({.flags = {"--load-timing-cache"}, .help = "Reuse the kernel times of earlier builds (implies --time-tactics)",
              .metavar = "FILE"});
  parser.add({.flags = {"--save-timing-cache"},
              .help = "Write the kernel times known after this build (implies --time-tactics)", .metavar = "FILE"});
  parser.add({.flags = {"--save-tactics", "--save-tactic-replay"}, .dest = "save_tactics", .help = "Write the tactic chosen per node (JSON), for --load-tactics",
              .metavar = "FILE"});
  parser.add({.flags = {"--load-tactics", "--load-tactic-replay"}, .dest = "load_tactics",
              .help = "Replay the tactics of a --save-tactics file: each node named there gets that tactic or the "
                      "build fails",
              .metavar = "FILE"});
  parser.add({.flags = {"--tactic-sources"},
              .help = "Kernel families a node may use: optimized, reference (default both); a node always keeps "
                      "its reference kernel",
              .metavar = "FAMILY", .arity = options::Arity::kOneOrMore});
  parser.add({.flags = {"--profile"},
              .help = "Optimization profile: INPUT:[MIN],[OPT],[MAX] per dynamic input (e.g. x:[1,3,48,64],[1,3,48,320],"
                      "[1,3,48,1024]); tactics are timed at OPT, memory planned for MAX, and runs outside every "
                      "profile are refused. An input named again starts the next profile",
              .metavar = "INPUT:[MIN],[OPT],[MAX]", .arity = options::Arity::kOneOrMore});
  parser.add({.flags = {"--trt-min-shapes"},
              .help = "Polygraphy's spelling of profiles: the min shapes (INPUT:[d0,...]); the k-th shape of an "
                      "input in --trt-min/opt/max-shapes belongs to profile k",
              .metavar = "INPUT:[SHAPE]", .arity = options::Arity::kOneOrMore});
  parser.add({.flags = {"--trt-opt-shapes"}, .help = "The opt shapes (see --trt-min-shapes)", .metavar = "INPUT:[SHAPE]",
              .arity = options::Arity::kOneOrMore});
  parser.add({.flags = {"--trt-max-shapes"}, .help = "The max shapes (see --trt-min-shapes)", .metavar = "INPUT:[SHAPE]",
              .arity = options::Arity::kOneOrMore});
}

bool PlanBuildArgs::any_given(const options::Args& args) const {
  for (const char* dest : kBuildDests)
    if (args.has(dest)) return true;
  return args.has("calibration_algo");
}

PlanBuildOptions PlanBuildArgs::parse(const options::Args& args, const std::vector<options::InputShape>& fixed) const {
  PlanBuildOptions build;
  build.precision = parse_precision_options(args);
  build.tactics = parse_tactic_options(args);
  build.profiles = parse_profile_options(args, fixed);
  build.calibration_cache = args.get_or("calibration_cache", "");
  build.calibration_algorithm = args.get_or("calibration_algo", "minmax");
  build.kernel_options = runners::kernel_options_from_environment();
  if (auto isa = args.get("isa")) build.kernel_options = runners::with_isa_cap(build.kernel_options, *isa);
  return build;
}

void PlanBuildArgs::save_build_files(const options::Args& args, const runtime::Session& session) const {
  save_tactic_files(args, session);
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
