// `parity convert`: change a model's precision (float32 -> float16), opset, or weight storage; or,
// with an output ending in .plan, build parity's engine: the optimized plan of the ref runtime
// (runtime/plan/plan_file.h).
#include <chrono>

#include "cli/command.h"
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
  }

  int run(const options::Args& args) override {
    if (std::filesystem::path(args.get_or("output", "")).extension() == ".plan") return build_plan(args);
    model::Model model = model_edit::load_input(args);
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
    return kExitPassed;
  }

 private:
  // -o X.plan: plan the model once (rewrites, fusion, kernel variant per node, packed weights) and
  // save the result, which `parity run X.plan --ref` loads without planning again.
  static int build_plan(const options::Args& args) {
    for (const char* dest : {"opset", "fp_to_fp16"})
      PARITY_CHECK(!args.has(dest), kInvalidArgument, "--", std::string(dest) == "opset" ? "opset" : "fp-to-fp16",
                   " converts ONNX models; it does not apply to a plan output (.plan)");
    const std::string model = args.get_or("model", "");
    const std::filesystem::path out = args.get_or("output", "");
    logger().info("Building plan: ", model);
    const auto start = std::chrono::steady_clock::now();
    runtime::Session session = runtime::Session::create(model).value();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    runtime::plan::save_plan(session, out, std::filesystem::path(model).filename().string(), seconds);
    logger().info("Saved plan to: ", out.string(), " (built in ", seconds, " s)");
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(ConvertCommand);

}  // namespace
}  // namespace parity::cli
