// `parity convert`: change a model's precision (float32 -> float16), opset, or weight storage; or,
// with an output ending in .plan, build parity's engine: the optimized plan of the ref runtime
// (runtime/plan/plan_file.h).
#include <optional>
#include <set>

#include <onnx/onnx_pb.h>

#include "cli/command.h"
#include "compare/feed_files.h"
#include "core/formats/file_io.h"
#include "options/data_loader_args.h"
#include "runtime/subgraph.h"
#include "tools/plan_build.h"
#include "cli/commands/model_edit_common.h"
#include "core/logger.h"
#include "model/transforms/extract.h"
#include "model/transforms/fp16.h"
#include "model/transforms/opset.h"
#include "runtime/plan/plan_file.h"
#include "runtime/session.h"

namespace parity::cli {
namespace {

class ConvertCommand : public Command {
 public:
  std::string name() const override { return "convert"; }
  std::string summary() const override { return "Convert an ONNX model: float16, opset, external data"; }

  void add_options(options::ArgParser& parser) override {
    model_edit::add_model_argument(parser);
    parser.group("Conversion");
    parser.add({.flags = {"--fp-to-fp16"},
                .help = "Convert float32 computation to float16; inputs/outputs keep their dtype (Casts at the "
                        "edges) and ops that must stay float32 are left alone",
                .arity = options::Arity::kFlag});
    parser.add({.flags = {"--fp16-io"}, .help = "With --fp-to-fp16: make float32 graph inputs/outputs float16 too",
                .arity = options::Arity::kFlag});
    parser.add({.flags = {"--fp16-keep-ops"}, .help = "With --fp-to-fp16: more op types to keep in float32",
                .metavar = "OP", .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--opset"}, .help = "Convert to this default-domain opset (libonnx's version converter)",
                .metavar = "N"});
    parser.add({.flags = {"--onnx-outputs"},
                .help = "Tensors to make the model's outputs; `mark all` makes every tensor an output",
                .metavar = "NAME", .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--onnx-exclude-outputs"}, .help = "Outputs to unmark (after --onnx-outputs)",
                .metavar = "NAME", .arity = options::Arity::kOneOrMore});
    model_edit::add_output_options(parser);
    parser.group("Plan build (-o X.plan)");
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
    parser.add({.flags = {"--save-tactics"}, .help = "Write the tactic chosen per node (JSON), for --load-tactics",
                .metavar = "FILE"});
    parser.add({.flags = {"--load-tactics"},
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
    model_edit::add_verify_options(parser, "converted");
    data_loader_args_.add_to(parser);
    iteration_args_.add_iterations_to(parser);
  }

  int run(const options::Args& args) override {
    if (std::filesystem::path(args.get_or("output", "")).extension() == ".plan") return build_plan(args);
    for (const char* flag : {"fp16", "bf16", "int8"})
      PARITY_CHECK(!args.flag(flag), kInvalidArgument, "--", flag,
                   " builds a reduced-precision plan (-o X.plan); to convert an ONNX model to float16 use --fp-to-fp16");
    model::Model model = model_edit::load_input(args);
    // Kept only for --verify: a big model's copy is not free.
    const std::optional<model::Model> original = args.has("verify") ? std::optional<model::Model>(model) : std::nullopt;
    const auto out = model_edit::output_path(args, model);
    if (args.has("onnx_outputs") || args.has("onnx_exclude_outputs")) {
      auto graph = model::transforms::graph_with_inferred_types(model);
      model_edit::mark_outputs_typed(*graph, args.list("onnx_outputs"), args.list("onnx_exclude_outputs"));
      logger().info("Outputs: ", graph->outputs.size(), " tensor(s)");
      model = graph->to_model();
    }
    if (auto opset = args.get_int("opset")) {
      const int64_t from = model.opset("");
      model::transforms::convert_opset(model, *opset);
      logger().info("Converted opset ", from, " -> ", *opset);
    }
    if (args.flag("fp_to_fp16")) {
      auto graph = model::transforms::graph_with_inferred_types(model);
      model::transforms::Fp16Options options;
      options.keep_io_types = !args.flag("fp16_io");
      for (const auto& op : args.list("fp16_keep_ops")) options.keep_ops.insert(op);
      const auto report = model::transforms::convert_to_fp16(*graph, options);
      logger().info("float16: ", report.converted_nodes, " nodes converted, ", report.kept_nodes,
                    " kept in float32, ", report.casts_added, " Casts added, ", report.constants_converted,
                    " constants converted");
      model = graph->to_model();
    }
    model_edit::save_output(model, out, args);
    return original ? model_edit::verify_rewritten(*original, model, args, "converted") : kExitPassed;
  }

 private:
  // -o X.plan: plan the model once (rewrites, fusion, kernel variant per node, packed weights) and
  // save the result, which `parity run X.plan --ref` loads without planning again.
  int build_plan(const options::Args& args) const {
    for (const char* dest : {"opset", "fp_to_fp16"})
      PARITY_CHECK(!args.has(dest), kInvalidArgument, "--", std::string(dest) == "opset" ? "opset" : "fp-to-fp16",
                   " converts ONNX models; it does not apply to a plan output (.plan)");
    PARITY_CHECK(!args.has("verify"), kInvalidArgument,
                 "--verify checks converted ONNX models; for a plan use `parity run X.plan --ref --ort`");
    const std::string model_path = args.get_or("model", "");
    const std::filesystem::path out = args.get_or("output", "");
    const options::DataLoaderOptions data = data_loader_args_.parse(args);
    const options::IterationOptions iterations = iteration_args_.parse(args);
    runtime::ReducedPrecisionConfig precision = parse_precision_options(args);
    logger().info("Building plan: ", model_path);
    model::Model model = model_edit::load_input(args);
    fix_input_shapes(model.proto(), data.input_shapes);
    const std::filesystem::path base_dir = std::filesystem::path(model_path).parent_path();
    tools::PlanBuildOptions build;
    build.precision = precision;
    build.tactics = parse_tactic_options(args);
    build.profiles = parse_profile_options(args, data.input_shapes);
    build.calibration_cache = args.get_or("calibration_cache", "");
    build.calibration_algorithm = args.get_or("calibration_algo", "minmax");
    build.calibration_feeds = [&] { return compare::make_feed_source(data, iterations.iterations); };
    const tools::BuiltPlan built = tools::build_and_save_plan(model, base_dir, std::move(build), out,
                                                              std::filesystem::path(model_path).filename().string());
    const double seconds = built.build_seconds;
    logger().info("Layers: ", tools::layer_precision_summary(built.session));
    save_tactic_files(args, built.session);
    logger().info("Saved plan to: ", out.string(), " (built in ", seconds, " s)");
    return kExitPassed;
  }

  static std::vector<runtime::OptimizationProfile> parse_profile_options(
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

  static runtime::TacticOptions parse_tactic_options(const options::Args& args) {
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

  static void save_tactic_files(const options::Args& args, const runtime::Session& session) {
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

  /// Node key -> tactic of every layer the plan runs.
  static std::map<std::string, std::string> plan_tactics(const runtime::Session& session) {
    std::map<std::string, std::string> tactics;
    for (const auto& node : session.plan().nodes_)
      if (!node.folded) tactics[runtime::tactic_node_key(node.kernel_spec)] = node.tactic;
    return tactics;
  }

  static runtime::ReducedPrecisionConfig parse_precision_options(const options::Args& args) {
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

  /// --input-shapes fix the plan's input shapes (a static plan: kernels pack for them).
  static void fix_input_shapes(onnx::ModelProto& model, const std::vector<options::InputShape>& shapes) {
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

  options::DataLoaderArgs data_loader_args_;
  options::IterationArgs iteration_args_{{.iterations = 1,
                                          .iterations_help = "Calibration batches the data loader makes (--int8)"}};
};

PARITY_REGISTER_COMMAND(ConvertCommand);

}  // namespace
}  // namespace parity::cli
