// `parity convert`: change a model's precision (float32 -> float16), opset, or weight storage; or,
// with an output ending in .plan, build parity's engine: the optimized plan of the ref runtime
// (runtime/plan/plan_file.h).
#include <algorithm>
#include <optional>
#include <set>

#include <onnx/onnx_pb.h>

#include "cli/command.h"
#include "compare/feed_files.h"
#include "core/formats/file_io.h"
#include "options/data_loader_args.h"
#include "runtime/subgraph.h"
#include "tools/plan_build.h"
#include "tools/plan_build_args.h"
#include "tools/qdq.h"
#include "cli/commands/model_edit_common.h"
#include "core/logger.h"
#include "model/transforms/extract.h"
#include "model/transforms/fp16.h"
#include "model/transforms/opset.h"
#include "runtime/plan/plan_file.h"
#include "runtime/session.h"
#include "runners/runner_args.h"
#include "tools/runtime_types.h"

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
    plan_build_args_.add_to(parser);
    model_edit::add_verify_options(parser, "converted");
    data_loader_args_.add_to(parser);
    iteration_args_.add_iterations_to(parser);
    parser.group("Model");
    model_edit::add_model_type_option(parser);
    parser.add({.flags = {"--convert-to"},
                .help = "Output format: onnx, or trt / plan (parity's engine: a plan of its runtime). Default: from "
                        "the output's extension (.plan and .engine: a plan; .onnx: ONNX), else a plan when a plan "
                        "build option (--fp16, --int8, ...) is given, else ONNX",
                .metavar = "FORMAT",
                .choices = {"onnx", "trt", "plan", "onnx-like-trt-network"}});
    runners::RunnerArgs().add_absent_options_to(parser);  // TensorRT's --workspace, --tf32, ...
  }

  int run(const options::Args& args) override {
    model_edit::check_model_type(args, args.get_or("model", ""));
    PARITY_CHECK(!runtime::plan::is_plan_file(args.get_or("model", "")), kInvalidArgument, "'",
                 args.get_or("model", ""), "' is a parity plan: convert reads ONNX models (run the plan with "
                 "`parity run X.plan --ref`)");
    if (writes_plan(args)) return build_plan(args);
    if (args.flag("int8")) return write_qdq_model(args);
    for (const char* flag : {"fp16", "bf16"})
      PARITY_CHECK(!args.flag(flag), kInvalidArgument, "--", flag,
                   " builds a reduced-precision plan (-o X.plan, or --convert-to trt); to convert an ONNX model to "
                   "float16 use --fp-to-fp16 (--int8 with an .onnx output writes a QDQ model)");
    model::Model model = model_edit::load_input(args);
    // Kept only for --verify: a big model's copy is not free.
    const std::optional<model::Model> original = args.has("verify") ? std::optional<model::Model>(model) : std::nullopt;
    const auto out = model_edit::output_path(args, model);
    if (args.has("onnx_outputs") || args.has("onnx_exclude_outputs")) {
      auto graph = model::transforms::graph_with_inferred_types(model);
      tools::mark_outputs_typed(*graph, args.list("onnx_outputs"), args.list("onnx_exclude_outputs"));
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
  // Whether the output is a plan: --convert-to, else the output's extension, else whether a plan
  // build option is given. The file's own header tells readers what it is, whatever its name.
  bool writes_plan(const options::Args& args) const {
    if (auto format = args.get("convert_to")) {
      PARITY_CHECK(*format != "onnx-like-trt-network", kInvalidArgument,
                   "--convert-to onnx-like-trt-network needs TensorRT, which parity does not have; closest in parity: "
                   "`parity inspect model X.plan --show layers` (the plan's layers as built)");
      return *format == "trt" || *format == "plan";
    }
    const std::string extension = std::filesystem::path(args.get_or("output", "")).extension().string();
    if (extension == ".plan" || extension == ".engine") return true;
    if (extension == ".onnx") return false;
    return plan_build_args_.parse(args).requested;
  }

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
    const tools::PlanBuildSettings settings = plan_build_args_.parse(args);
    tools::PlanBuildOptions build = tools::plan_build_options(settings, data.input_shapes);
    logger().info("Building plan: ", model_path);
    model::Model model = model_edit::load_input(args);
    tools::fix_input_shapes(model.proto(), data.input_shapes);
    const std::filesystem::path base_dir = std::filesystem::path(model_path).parent_path();
    build.calibration_feeds = [&] { return compare::make_feed_source(data, iterations.iterations); };
    const tools::BuiltPlan built = tools::build_and_save_plan(model, base_dir, std::move(build), out, model_path);
    const double seconds = built.build_seconds;
    logger().info("Layers: ", tools::layer_precision_summary(built.session));
    tools::save_build_files(settings, built.session);
    logger().info("Saved plan to: ", out.string(), " (built in ", seconds, " s)");
    return kExitPassed;
  }

  // --int8 -o X.onnx: calibrate as an int8 plan build does (or read its cache) and write the ranges as
  // QuantizeLinear/DequantizeLinear pairs (tools/qdq.h), for ONNX Runtime, TensorRT or a later
  // `convert X.onnx --int8 -o X.plan`.
  int write_qdq_model(const options::Args& args) const {
    for (const char* flag : {"opset", "fp-to-fp16", "fp16", "bf16", "layer-precisions"}) {
      std::string dest = flag;
      std::replace(dest.begin(), dest.end(), '-', '_');
      PARITY_CHECK(!args.has(dest), kInvalidArgument, "--", flag,
                   " does not combine with --int8 and an ONNX output (a QDQ model)");
    }
    const std::string model_path = args.get_or("model", "");
    const options::DataLoaderOptions data = data_loader_args_.parse(args);
    const options::IterationOptions iterations = iteration_args_.parse(args);
    tools::PlanBuildOptions build = tools::plan_build_options(plan_build_args_.parse(args), data.input_shapes);
    model::Model model = model_edit::load_input(args);
    const std::optional<model::Model> original = args.has("verify") ? std::optional<model::Model>(model) : std::nullopt;
    const auto out = model_edit::output_path(args, model);
    PARITY_CHECK(!tools::has_qdq_nodes(model), kInvalidArgument, "'", model_path,
                 "' is already explicitly quantized (it has QuantizeLinear/DequantizeLinear nodes)");
    const std::filesystem::path base_dir = std::filesystem::path(model_path).parent_path();
    build.calibration_feeds = [&] { return compare::make_feed_source(data, iterations.iterations); };
    const auto scales = tools::calibration_scales(model, base_dir, build);
    const tools::QdqExportReport report = tools::export_qdq(model, scales);
    logger().info("QDQ: ", report.layers, " layer(s) quantized (", report.activation_pairs,
                  " activation QuantizeLinear/DequantizeLinear pairs, ", report.weights, " per-channel int8 weights)",
                  report.skipped_layers ? ", " + std::to_string(report.skipped_layers) +
                                              " left in float (no calibrated range for their input)"
                                        : std::string());
    model_edit::save_output(model, out, args);
    return original ? model_edit::verify_rewritten(*original, model, args, "converted") : kExitPassed;
  }

  options::DataLoaderArgs data_loader_args_;
  options::IterationArgs iteration_args_{{.iterations = 1,
                                          .iterations_help = "Calibration batches the data loader makes (--int8)"}};
  tools::PlanBuildArgs plan_build_args_;
};

PARITY_REGISTER_COMMAND(ConvertCommand);

}  // namespace
}  // namespace parity::cli
