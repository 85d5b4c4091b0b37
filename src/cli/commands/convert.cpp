// `parity convert`: change a model's precision (float32 -> float16), opset, or weight storage.
#include "cli/command.h"
#include "cli/commands/model_edit_common.h"
#include "core/logger.h"
#include "onnx/transforms/extract.h"
#include "onnx/transforms/fp16.h"
#include "onnx/transforms/opset.h"

namespace parity::cli {
namespace {

class ConvertCommand : public Command {
 public:
  std::string name() const override { return "convert"; }
  std::string summary() const override { return "Convert an ONNX model: float16, opset, external data"; }

  void add_options(ArgParser& parser) override {
    model_edit::add_model_argument(parser);
    parser.group("Conversion");
    parser.add({.flags = {"--fp-to-fp16"},
                .help = "Convert float32 computation to float16; inputs/outputs keep their dtype (Casts at the "
                        "edges) and ops that must stay float32 are left alone",
                .arity = Arity::kFlag});
    parser.add({.flags = {"--fp16-io"}, .help = "With --fp-to-fp16: make float32 graph inputs/outputs float16 too",
                .arity = Arity::kFlag});
    parser.add({.flags = {"--fp16-keep-ops"}, .help = "With --fp-to-fp16: more op types to keep in float32",
                .metavar = "OP", .arity = Arity::kOneOrMore});
    parser.add({.flags = {"--opset"}, .help = "Convert to this default-domain opset (libonnx's version converter)",
                .metavar = "N"});
    model_edit::add_output_options(parser);
  }

  int run(const Args& args) override {
    onnx_io::Model model = model_edit::load_input(args);
    const auto out = model_edit::output_path(args, model);
    if (auto opset = args.get_int("opset")) {
      const int64_t from = model.opset("");
      transforms::convert_opset(model, *opset);
      logger().info("Converted opset ", from, " -> ", *opset);
    }
    if (args.flag("fp_to_fp16")) {
      auto graph = transforms::graph_with_inferred_types(model);
      transforms::Fp16Options options;
      options.keep_io_types = !args.flag("fp16_io");
      for (const auto& op : args.list("fp16_keep_ops")) options.keep_ops.insert(op);
      const auto report = transforms::convert_to_fp16(*graph, options);
      logger().info("float16: ", report.converted_nodes, " nodes converted, ", report.kept_nodes,
                    " kept in float32, ", report.casts_added, " Casts added, ", report.constants_converted,
                    " constants converted");
      model = graph->to_model();
    }
    model_edit::save_output(model, out, args);
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(ConvertCommand);

}  // namespace
}  // namespace parity::cli
