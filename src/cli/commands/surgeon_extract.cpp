// `parity surgeon extract`: cut a subgraph out of a model at given tensors (Polygraphy's
// `surgeon extract`). Unknown dtypes/shapes come from shape inference, else from running parity's
// runtime on generated inputs.
#include <onnx/onnx_pb.h>

#include "cli/command.h"
#include "cli/commands/model_edit_common.h"
#include "core/logger.h"
#include "model/transforms/extract.h"
#include "tools/runtime_types.h"

namespace parity::cli {
namespace {

// Whether an 'auto' boundary tensor has no type in the model itself, so that its type comes from
// ONNX shape inference (as in Polygraphy, which runs shape inference only then).
bool needs_shape_inference(const onnx::GraphProto& g, const std::vector<model::transforms::TensorSpec>& specs) {
  for (const auto& spec : specs) {
    if (spec.dtype && spec.shape) continue;
    bool typed = false;
    for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
      for (const auto& v : *list) typed |= v.name() == spec.name && v.type().tensor_type().elem_type() != 0;
    if (!typed) return true;
  }
  return false;
}

class SurgeonExtractCommand : public Command {
 public:
  std::string name() const override { return "surgeon extract"; }
  std::string summary() const override { return "Extract a subgraph between given tensors into a new model"; }

  void add_options(options::ArgParser& parser) override {
    model_edit::add_model_argument(parser);
    parser.group("Subgraph");
    parser.add({.flags = {"--inputs"},
                .help = "New graph inputs as name:shape:dtype, e.g. x:[1,3,224,224]:float32; shape and dtype may "
                        "be 'auto' (default: the model's inputs)",
                .metavar = "SPEC", .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--outputs"},
                .help = "New graph outputs as name:dtype; dtype may be 'auto' (default: the model's outputs)",
                .metavar = "SPEC", .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--force-fallback-shape-inference"},
                .help = "Find the types and shapes of 'auto' tensors by running the model with parity's runtime "
                        "instead of shape inference",
                .arity = options::Arity::kFlag});
    model_edit::add_output_options(parser);
  }

  int run(const options::Args& args) override {
    model::Model model = model_edit::load_input(args);
    const auto out = model_edit::output_path(args, model);
    model::transforms::ExtractOptions options;
    for (const auto& text : args.list("inputs")) options.inputs.push_back(model::transforms::parse_input_spec(text));
    for (const auto& text : args.list("outputs")) options.outputs.push_back(model::transforms::parse_output_spec(text));
    options.resolve_types = tools::resolve_types_by_running;
    options.force_fallback = args.flag("force_fallback_shape_inference");
    auto graph = model::transforms::extract_subgraph(model, options);
    if (!options.force_fallback && (needs_shape_inference(model.proto().graph(), options.inputs) ||
                                    needs_shape_inference(model.proto().graph(), options.outputs)))
      logger().info("Shape inference completed successfully");
    logger().info("Extracted ", graph->node_count(), " of ", model.proto().graph().node_size(), " nodes");
    model_edit::save_output(graph->to_model(), out, args);
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(SurgeonExtractCommand);

}  // namespace
}  // namespace parity::cli
