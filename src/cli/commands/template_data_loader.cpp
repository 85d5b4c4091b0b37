// `parity template data-loader [MODEL] -o loader.cpp`: the C++ counterpart of Polygraphy's data
// loader scripts. Writes a program whose load_data() makes one feed per iteration (for MODEL's
// inputs) and saves them as a Polygraphy inputs JSON for `--load-inputs`, with a CMake snippet.
#include <set>

#include "cli/command.h"
#include "core/logger.h"
#include "model/graph.h"
#include "tools/templates.h"

namespace parity::cli {
namespace {

class TemplateDataLoaderCommand : public Command {
 public:
  std::string name() const override { return "template data-loader"; }
  std::string summary() const override {
    return "Write a C++ program that makes input data and saves it for --load-inputs (Polygraphy's data loader scripts)";
  }

  void add_options(options::ArgParser& parser) override {
    parser.add({.flags = {}, .dest = "model", .help = "Model whose inputs the program fills (optional)",
                .metavar = "MODEL"});
    parser.add({.flags = {"-o", "--output"}, .help = "Program to write (FILE.cpp; FILE.cmake is written beside it)",
                .metavar = "FILE.cpp", .required = true});
    parser.add({.flags = {"--iterations"}, .help = "Feeds load_data() makes (default 5)", .metavar = "N"});
  }

  int run(const options::Args& args) override {
    const int64_t iterations = args.get_int("iterations").value_or(5);
    PARITY_CHECK(iterations >= 1 && iterations <= 1000000, kInvalidArgument, "--iterations must be 1 or more, got ",
                 iterations);
    std::optional<TensorMetadata> inputs;
    if (auto m = args.get("model")) {
      const auto graph = model::Graph::from_model(model::load_model(*m).value());
      inputs.emplace();
      std::set<const model::Value*> constants;
      for (const auto& v : graph->initializers) constants.insert(v.get());
      for (const auto& v : graph->inputs)
        if (!constants.count(v.get())) inputs->add(v->name, v->dtype, v->shape);
    }
    const std::string out = *args.get("output");
    const std::string target = std::filesystem::path(out).stem().string();
    const auto snippet = tools::write_run_script(
        out, tools::data_loader_template(inputs, static_cast<int>(iterations), target));
    logger().info("Wrote ", out, " and ", snippet);
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(TemplateDataLoaderCommand);

}  // namespace
}  // namespace parity::cli
