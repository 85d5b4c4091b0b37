// `parity surgeon insert`: replace the subgraph between tensors with one node.
#include "cli/command.h"
#include "cli/commands/model_edit_common.h"
#include "core/logger.h"
#include "model/transforms/insert.h"

namespace parity::cli {
namespace {

class SurgeonInsertCommand : public Command {
 public:
  std::string name() const override { return "surgeon insert"; }
  std::string summary() const override { return "Replace the subgraph between tensors with a single node"; }

  void add_options(options::ArgParser& parser) override {
    model_edit::add_model_argument(parser);
    parser.group("Node");
    parser.add({.flags = {"--inputs"}, .help = "Tensors the new node reads", .metavar = "TENSOR",
                .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--outputs"}, .help = "Tensors the new node produces (their current producers are replaced)",
                .metavar = "TENSOR", .arity = options::Arity::kOneOrMore, .required = true});
    parser.add({.flags = {"--op"}, .help = "Operator type of the new node", .metavar = "OP", .required = true});
    parser.add({.flags = {"--domain"}, .help = "Operator domain (default: the ONNX domain, checked against its schemas)",
                .metavar = "DOMAIN"});
    parser.add({.flags = {"--name"}, .help = "Name of the new node", .metavar = "NAME"});
    parser.add({.flags = {"--attrs"}, .help = "Attributes as key=value: 1, 0.5, [1,2], text", .metavar = "K=V",
                .arity = options::Arity::kOneOrMore});
    model_edit::add_verify_options(parser, "edited");
    model_edit::add_output_options(parser);
  }

  int run(const options::Args& args) override {
    model::Model model = model_edit::load_input(args);
    const auto out = model_edit::output_path(args, model);
    model::transforms::InsertOptions options;
    options.inputs = args.list("inputs");
    options.outputs = args.list("outputs");
    options.op = args.get_or("op", "");
    options.domain = args.get_or("domain", "");
    options.name = args.get_or("name", "");
    options.attrs = args.list("attrs");
    auto graph = model::Graph::from_model(model);
    const size_t before = graph->node_count(false);
    const bool known_op = model::transforms::insert_node(*graph, options);
    logger().info("Inserted ", options.op, "; nodes: ", before, " -> ", graph->node_count(false));
    // A custom op cannot pass libonnx's checker (no schema to check against).
    const model::Model edited = graph->to_model();
    model_edit::save_output(edited, out, args, /*check=*/known_op);
    return model_edit::verify_rewritten(model, edited, args, "edited");
  }
};

PARITY_REGISTER_COMMAND(SurgeonInsertCommand);

}  // namespace
}  // namespace parity::cli
