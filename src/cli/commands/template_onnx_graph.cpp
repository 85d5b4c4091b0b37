// `parity template onnx-graph [MODEL] -o edit.cpp`: Polygraphy's `template onnx-gs` in C++. Writes a
// program that loads a model into parity's graph IR, lets the user edit it in one function and
// saves it, with a CMake snippet (edit.cmake) that builds it against the installed parity.
#include "cli/command.h"
#include "cli/commands/model_edit_common.h"
#include "core/logger.h"
#include "model/graph.h"
#include "tools/templates.h"

namespace parity::cli {
namespace {

class TemplateOnnxGraphCommand : public Command {
 public:
  std::string name() const override { return "template onnx-graph"; }
  std::string summary() const override {
    return "Write a C++ program that edits an ONNX model with parity's graph IR (Polygraphy's template onnx-gs)";
  }

  void add_options(options::ArgParser& parser) override {
    parser.add({.flags = {}, .dest = "model", .help = "Model the program is made for (its default input; optional)",
                .metavar = "MODEL"});
    parser.add({.flags = {"-o", "--output"}, .help = "Program to write (FILE.cpp; FILE.cmake is written beside it)",
                .metavar = "FILE.cpp", .required = true});
  }

  int run(const options::Args& args) override {
    std::optional<std::string> model_path;
    std::optional<TensorMetadata> inputs, outputs;
    if (auto m = args.get("model")) {
      const auto graph = model::Graph::from_model(model::load_model(*m).value());
      model_path = *m;
      inputs.emplace();
      outputs.emplace();
      for (const auto& v : graph->inputs) inputs->add(v->name, v->dtype, v->shape);
      for (const auto& v : graph->outputs) outputs->add(v->name, v->dtype, v->shape);
    }
    const std::string out = *args.get("output");
    const std::string target = std::filesystem::path(out).stem().string();
    const auto snippet = tools::write_run_script(out, tools::onnx_graph_template(model_path, inputs, outputs, target));
    logger().info("Wrote ", out, " and ", snippet);
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(TemplateOnnxGraphCommand);

}  // namespace
}  // namespace parity::cli
