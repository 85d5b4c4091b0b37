// `parity surgeon sanitize`: Polygraphy's sanitize, in its order: mark outputs, override input
// shapes, take shapes from a run (--force-fallback-shape-inference), clean up, fold constants with
// parity's own runtime (Shape subgraphs fold once input shapes are static), sort, save.
#include <onnx/onnx_pb.h>

#include "cli/command.h"
#include "cli/commands/model_edit_common.h"
#include "core/logger.h"
#include "model/transforms/extract.h"
#include "model/transforms/outputs.h"
#include "model/transforms/tensor_spec.h"
#include "model/transforms/unbounded_dds.h"
#include "options/byte_size.h"
#include "tools/fold.h"
#include "tools/runtime_types.h"

namespace parity::cli {
namespace {

// Folding options that mean nothing without --fold-constants (Polygraphy warns about each).
const char* const kFoldOnlyOptions[] = {"num_passes", "fold_size_threshold", "partitioning", "no_fold_shapes",
                                        "no_per_pass_shape_inference"};

void add_folding_options(options::ArgParser& parser) {
  parser.group("Constant Folding");
  parser.add({.flags = {"--fold-constants"}, .help = "Fold constant subgraphs (evaluated with parity's runtime)",
              .arity = options::Arity::kFlag});
  parser.add({.flags = {"--num-passes", "--num-const-fold-passes"}, .dest = "num_passes",
              .help = "Folding passes (default: until nothing changes)", .metavar = "N"});
  parser.add({.flags = {"--partitioning"},
              .help = "How a failure to evaluate part of the graph is contained. parity always falls back to "
                      "evaluating node by node, so both modes behave like 'recursive'",
              .metavar = "MODE", .choices = {"basic", "recursive"}});
  parser.add({.flags = {"--fold-size-threshold"},
              .help = "Leave folded tensors larger than this many bytes computed at run time; K, M or G suffix for "
                      "KiB, MiB, GiB (e.g. 16M)",
              .metavar = "BYTES"});
  parser.add({.flags = {"--no-fold-shapes"}, .help = "Do not fold Shape/Size nodes of static shapes",
              .arity = options::Arity::kFlag});
  parser.add({.flags = {"--no-per-pass-shape-inference"},
              .help = "Run shape inference only before the first folding pass, not between passes",
              .arity = options::Arity::kFlag});
}

void add_shape_options(options::ArgParser& parser) {
  parser.group("Shapes and outputs");
  parser.add({.flags = {"--override-input-shapes"},
              .help = "Set graph input shapes, e.g. x:[1,3,224,224]; static shapes let Shape subgraphs fold. A "
                      "tensor that is not a graph input is ignored with a warning",
              .metavar = "NAME:SHAPE", .arity = options::Arity::kOneOrMore});
  parser.add({.flags = {"--no-shape-inference"}, .help = "Do not run shape inference on the loaded model",
              .arity = options::Arity::kFlag});
  parser.add({.flags = {"--force-fallback-shape-inference"},
              .help = "Take every tensor's type and shape from running the model with parity's runtime (generated "
                      "inputs) instead of shape inference",
              .arity = options::Arity::kFlag});
  parser.add({.flags = {"--no-onnxruntime-shape-inference"},
              .help = "Accepted for Polygraphy compatibility: parity's shape inference never uses ONNX Runtime",
              .arity = options::Arity::kFlag});
  parser.add({.flags = {"--outputs"},
              .help = "Tensors to make the graph outputs; 'mark all' makes every tensor an output",
              .metavar = "NAME", .arity = options::Arity::kOneOrMore});
  parser.add({.flags = {"--exclude-outputs"}, .help = "Graph outputs to unmark (after --outputs)",
              .metavar = "NAME", .arity = options::Arity::kOneOrMore});
}

tools::FoldOptions fold_options(const options::Args& args) {
  tools::FoldOptions options;
  if (auto n = args.get_int("num_passes")) {
    PARITY_CHECK(*n >= 1, kInvalidArgument, "--num-passes must be at least 1, got ", *n);
    options.num_passes = static_cast<int>(*n);
  }
  if (auto b = args.get("fold_size_threshold"))
    options.size_threshold = static_cast<size_t>(options::parse_num_bytes(*b, "--fold-size-threshold"));
  options.fold_shapes = !args.flag("no_fold_shapes");
  options.per_pass_shape_inference = !args.flag("no_per_pass_shape_inference");
  return options;
}

class SurgeonSanitizeCommand : public Command {
 public:
  std::string name() const override { return "surgeon sanitize"; }
  std::string summary() const override { return "Fold constants, override input shapes, clean up and sort a model"; }

  void add_options(options::ArgParser& parser) override {
    model_edit::add_model_argument(parser);
    add_folding_options(parser);
    add_shape_options(parser);
    parser.group("Sanitizing");
    parser.add({.flags = {"--cleanup"},
                .help = "Remove nodes that feed no graph output (graph inputs stay, as in Polygraphy)",
                .arity = options::Arity::kFlag});
    parser.add({.flags = {"--toposort"}, .help = "Sort nodes topologically", .arity = options::Arity::kFlag});
    parser.add({.flags = {"--set-unbounded-dds-upper-bound"}, .dest = "upper_bounds",
                .help = "Bound data-dependent shapes that have no upper bound (see inspect model "
                        "--list-unbounded-dds) by inserting a Min after each size tensor: N bounds every such tensor, "
                        "NAME:N one tensor (also a bounded one), e.g. 10000 limit:5000. Applied after folding, on "
                        "inferred shapes",
                .metavar = "[NAME:]N", .arity = options::Arity::kOneOrMore});
    model_edit::add_verify_options(parser, "sanitized");
    model_edit::add_output_options(parser);
  }

  int run(const options::Args& args) override {
    model::Model model = model_edit::load_input(args);
    const auto out = model_edit::output_path(args, model);
    const bool fold = args.flag("fold_constants");
    for (const char* option : kFoldOnlyOptions)
      if (!fold && args.has(option))
        logger().warning("--", dashed(option), " is ignored: it only applies with --fold-constants");
    const tools::FoldOptions folding = fold_options(args);  // parsed up front: bad values fail before work
    const auto upper_bounds = model::transforms::parse_upper_bounds(args.list("upper_bounds"),
                                                                    "--set-unbounded-dds-upper-bound");
    std::map<std::string, DimShape> shapes;
    for (const auto& text : args.list("override_input_shapes")) {
      auto [name, shape] = split_name_value(text);
      PARITY_CHECK(!name.empty(), kInvalidArgument, "--override-input-shapes: '", text, "' should be name:[dims]");
      shapes[name] = parse_dim_shape(shape, "--override-input-shapes " + name);
    }

    const bool infer = !args.flag("no_shape_inference");
    auto graph = infer ? model::transforms::graph_with_inferred_types(model) : model::Graph::from_model(model);
    const size_t before = graph->node_count(false);
    if (args.has("outputs") || args.has("exclude_outputs")) {
      tools::mark_outputs_typed(*graph, args.list("outputs"), args.list("exclude_outputs"));
    }
    if (!shapes.empty()) {
      tools::reshape_inputs(*graph, shapes);
      if (infer) graph = model::transforms::graph_with_inferred_types(graph->to_model());
    }
    if (args.flag("force_fallback_shape_inference"))
      logger().info("Shapes from running the model: ", tools::set_types_by_running(*graph), " tensors");
    if (args.flag("cleanup")) graph->cleanup(/*remove_unused_inputs=*/false, /*recurse=*/true);
    if (fold) {
      tools::FoldReport report;
      graph = tools::fold_constants(graph->to_model(), folding, &report);
      logger().info("Folding: ", report.constant_nodes, " Constant nodes, ", report.shape_nodes, " Shape/Size nodes, ",
                    report.evaluated, " computed values in ", report.passes, " passes");
    }
    if (args.has("upper_bounds")) {
      graph = model::transforms::graph_with_inferred_types(graph->to_model());
      std::string applied;
      for (const auto& [name, bound] : model::transforms::set_upper_bounds(*graph, upper_bounds))
        applied += (applied.empty() ? "'" : ", '") + name + "': " + std::to_string(bound);
      logger().info("Set tensor upper bounds: {", applied, "}");
    }
    if (args.flag("toposort")) graph->toposort();
    logger().info("Nodes: ", before, " -> ", graph->node_count(false));
    const model::Model sanitized = graph->to_model();
    model_edit::save_output(sanitized, out, args);
    return model_edit::verify_rewritten(model, sanitized, args, "sanitized");
  }

 private:
  static std::string dashed(std::string dest) {
    std::replace(dest.begin(), dest.end(), '_', '-');
    return dest;
  }
};

PARITY_REGISTER_COMMAND(SurgeonSanitizeCommand);

}  // namespace
}  // namespace parity::cli
