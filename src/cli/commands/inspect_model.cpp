// `parity inspect model MODEL`: opset/IR/producer, graph inputs and outputs, weights summary and,
// with --show, every node with its tensors, attributes and nested subgraphs (Polygraphy's layout).
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <fstream>

#include "cli/command.h"
#include "core/logger.h"
#include "onnx/graph.h"
#include "onnx/model.h"
#include "onnx/model_summary.h"
#include "onnx/shape_inference.h"

namespace parity::cli {
namespace {

class InspectModelCommand : public Command {
 public:
  std::string name() const override { return "inspect model"; }
  std::string summary() const override { return "Display information about an ONNX model"; }

  void add_options(ArgParser& parser) override {
    parser.add({.flags = {}, .dest = "model", .help = "Path to the ONNX model", .metavar = "MODEL", .required = true});
    parser.add({.flags = {"--show"},
                .help = "What to show besides the overview: layers (every node with its tensors), attrs (node "
                        "attributes; implies layers), weights (initializer values)",
                .arity = Arity::kOneOrMore,
                .choices = {"layers", "attrs", "weights"}});
    parser.add({.flags = {"--format"}, .help = "Output format", .choices = {"text", "json"}, .default_value = "text"});
    parser.add({.flags = {"-o", "--output"}, .help = "Also write the report to this file", .metavar = "PATH"});
    parser.add({.flags = {"--shape-inference"},
                .help = "Run ONNX shape inference (with data propagation) first, to show more tensor shapes",
                .arity = Arity::kFlag});
  }

  int run(const Args& args) override {
    const std::string path = *args.get("model");
    const bool json = args.get_or("format", "text") == "json";
    // JSON goes to stdout for other programs; keep chatter out of it.
    if (json) logger().verbose("Loading model: ", path);
    else logger().info("Loading model: ", path);
    onnx_io::Model model = onnx_io::load_model(path).value();
    if (args.flag("shape_inference")) {
      onnx::ModelProto inferred(model.proto());
      onnx_io::infer_shapes(inferred, /*data_prop=*/true);
      model.proto() = std::move(inferred);
    }
    auto graph = ir::Graph::from_model(model);
    graph->toposort();  // refuses cyclic graphs with the nodes of the cycle

    onnx_io::SummaryOptions options;
    for (const auto& what : args.list("show")) {
      if (what == "layers") options.layers = true;
      if (what == "attrs") options.layers = options.attrs = true;
      if (what == "weights") options.weights = true;
    }
    const std::string report = json ? onnx_io::summarize_model_json(*graph, options)
                                     : "==== ONNX Model ====\n" + onnx_io::summarize_model_text(*graph, options);
    if (json) {
      std::fputs((report + "\n").c_str(), stdout);
      std::fflush(stdout);
    } else {
      logger().info(report);
    }
    if (auto out = args.get("output")) {
      std::ofstream file(*out, std::ios::binary | std::ios::trunc);
      PARITY_CHECK(file, kIo, "cannot write '", *out, "'");
      file << report << "\n";
      PARITY_CHECK(file.good(), kIo, "writing '", *out, "' failed");
      logger().info("Wrote report to: ", *out);
    }
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(InspectModelCommand);

}  // namespace
}  // namespace parity::cli
