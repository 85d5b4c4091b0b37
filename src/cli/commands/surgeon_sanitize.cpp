// `parity surgeon sanitize`: fold constants with parity's own runtime, fold Shape subgraphs once
// input shapes are static, override input shapes, clean up and sort the graph.
#include <onnx/onnx_pb.h>

#include "cli/command.h"
#include "cli/commands/model_edit_common.h"
#include "core/logger.h"
#include "onnx/transforms/extract.h"
#include "onnx/transforms/fold.h"
#include "onnx/transforms/tensor_spec.h"

namespace parity::cli {
namespace {

class SurgeonSanitizeCommand : public Command {
 public:
  std::string name() const override { return "surgeon sanitize"; }
  std::string summary() const override { return "Fold constants, override input shapes, clean up and sort a model"; }

  void add_options(ArgParser& parser) override {
    model_edit::add_model_argument(parser);
    parser.group("Sanitizing");
    parser.add({.flags = {"--fold-constants"}, .help = "Fold constant subgraphs (evaluated with parity's runtime)",
                .arity = Arity::kFlag});
    parser.add({.flags = {"--num-passes"}, .help = "Folding passes (default: until nothing changes)", .metavar = "N"});
    parser.add({.flags = {"--fold-size-threshold"},
                .help = "Leave folded tensors larger than this many bytes computed at run time", .metavar = "BYTES"});
    parser.add({.flags = {"--no-fold-shapes"}, .help = "Do not fold Shape/Size nodes of static shapes",
                .arity = Arity::kFlag});
    parser.add({.flags = {"--override-input-shapes"},
                .help = "Set graph input shapes, e.g. x:[1,3,224,224]; static shapes let Shape subgraphs fold",
                .metavar = "NAME:SHAPE", .arity = Arity::kOneOrMore});
    parser.add({.flags = {"--cleanup"}, .help = "Remove nodes and unused graph inputs that feed no output",
                .arity = Arity::kFlag});
    parser.add({.flags = {"--toposort"}, .help = "Sort nodes topologically", .arity = Arity::kFlag});
    model_edit::add_output_options(parser);
  }

  int run(const Args& args) override {
    onnx_io::Model model = model_edit::load_input(args);
    const auto out = model_edit::output_path(args, model);
    std::map<std::string, DimShape> shapes;
    for (const auto& text : args.list("override_input_shapes")) {
      auto [name, shape] = split_name_value(text);
      PARITY_CHECK(!name.empty(), kInvalidArgument, "--override-input-shapes: '", text, "' should be name:[dims]");
      shapes[name] = transforms::parse_dim_shape(shape, "--override-input-shapes " + name);
    }
    std::shared_ptr<ir::Graph> graph;
    const size_t before = static_cast<size_t>(model.proto().graph().node_size());
    if (args.flag("fold_constants")) {
      transforms::FoldOptions options;
      if (auto n = args.get_int("num_passes")) {
        PARITY_CHECK(*n >= 1, kInvalidArgument, "--num-passes must be at least 1, got ", *n);
        options.num_passes = static_cast<int>(*n);
      }
      if (auto b = args.get_int("fold_size_threshold")) {
        PARITY_CHECK(*b >= 0, kInvalidArgument, "--fold-size-threshold must be >= 0, got ", *b);
        options.size_threshold = static_cast<size_t>(*b);
      }
      options.fold_shapes = !args.flag("no_fold_shapes");
      transforms::FoldReport report;
      graph = transforms::fold_constants(model, options, &report, shapes);
      logger().info("Folding: ", report.constant_nodes, " Constant nodes, ", report.shape_nodes, " Shape/Size nodes, ",
                    report.evaluated, " computed values in ", report.passes, " passes");
    } else {
      graph = ir::Graph::from_model(model);
      if (!shapes.empty()) {
        transforms::override_input_shapes(*graph, shapes);
        graph = transforms::graph_with_inferred_types(graph->to_model());
      }
    }
    if (args.flag("cleanup")) graph->cleanup(/*remove_unused_inputs=*/true, true);
    if (args.flag("toposort")) graph->toposort();
    logger().info("Nodes: ", before, " -> ", graph->node_count(false));
    model_edit::save_output(graph->to_model(), out, args);
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(SurgeonSanitizeCommand);

}  // namespace
}  // namespace parity::cli
