// `parity run MODEL --ref --ort ...`: runs a model on several runners with identical inputs and
// compares their outputs, with Polygraphy's `run` options and output. `--onnx-outputs mark all`
// compares every intermediate tensor layer by layer with bounded memory (compare/layerwise.h).
#include <filesystem>

#include "cli/command.h"
#include "cli/commands/model_edit_common.h"
#include "compare/compare_args.h"
#include "compare/isolation_args.h"
#include "compare/postprocess_args.h"
#include "core/logger.h"
#include "core/text.h"
#include "options/data_loader_args.h"
#include "runners/registry.h"
#include "runners/runner_args.h"
#include "tools/plan_runner.h"
#include "tools/report/report_args.h"
#include "tools/run/run_models.h"
#include "tools/run_script.h"

namespace parity::cli {
namespace {

// ---- the command ------------------------------------------------------------------------------

class RunCommand : public Command {
 public:
  std::string name() const override { return "run"; }
  std::string summary() const override {
    return "Run a model on several runners with identical inputs and compare the outputs";
  }

  void add_options(options::ArgParser& parser) override {
    parser.add({.flags = {}, .dest = "model", .help = "ONNX model to run (optional with --load-outputs only)",
                .metavar = "MODEL", .arity = options::Arity::kOne});
    runner_args_.add_flags_to(parser, "Runners (run in the order given; each is compared with the next)");
    parser.add({.flags = {"--compare-to"}, .help = "Compare each runner with the next (default) or all with the first",
                .metavar = "WHICH", .choices = {"next", "first"}, .default_value = "next"});

    parser.group("Model");
    model_edit::add_model_type_option(parser);
    parser.add({.flags = {"--onnx-outputs"},
                .help = "Tensors to use as outputs, or `mark all` to compare every intermediate tensor layer by "
                        "layer (streamed: only statistics are kept)",
                .metavar = "NAME", .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--onnx-exclude-outputs"}, .help = "Outputs to leave out (with --onnx-outputs)",
                .metavar = "NAME", .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--mark-all-window-mb"},
                .help = "With `mark all`: MiB of peer outputs held at once (default 64)", .metavar = "MB"});
    parser.add({.flags = {"--save-onnx"},
                .help = "Save the ONNX model the runners load (with --onnx-outputs/--onnx-exclude-outputs applied)",
                .metavar = "PATH"});
    parser.add({.flags = {"--external-data-dir", "--load-external-data", "--ext"}, .dest = "external_data_dir",
                .help = "Folder holding the model's external data (default: the model's folder)", .metavar = "DIR"});
    parser.add({.flags = {"--shape-inference", "--do-shape-inference", "--no-shape-inference",
                          "--no-onnxruntime-shape-inference"},
                .dest = "shape_inference_choice",
                .help = "Accepted as Polygraphy spells them; no effect: every parity runtime infers the shapes it "
                        "needs itself, and outputs do not depend on it",
                .arity = options::Arity::kFlag});

    data_loader_args_.add_to(parser);
    iteration_args_.add_iterations_to(parser);

    parser.group("Comparator");
    iteration_args_.add_warm_up_to(parser);
    parser.add({.flags = {"--save-inputs", "--save-input-data"}, .dest = "save_inputs",
                .help = "Save the inputs used (Polygraphy JSON)", .metavar = "PATH"});
    parser.add({.flags = {"--save-outputs", "--save-results"}, .dest = "save_outputs",
                .help = "Save the runners' outputs (Polygraphy RunResults JSON)", .metavar = "PATH"});
    parser.add({.flags = {"--load-outputs", "--load-results"}, .dest = "load_outputs",
                .help = "RunResults JSON files (e.g. from Polygraphy on another machine) or ONNX test-data "
                        "folders (output_K.pb files, or test_data_set_N folders of them) to compare as well",
                .metavar = "PATH", .arity = options::Arity::kOneOrMore});
    compare::PostprocessArgs().add_to(parser);
    compare_args_.add_to(parser);
    compare::IsolationArgs().add_to(parser);

    parser.group("Script");
    parser.add({.flags = {"--gen-script", "--gen"}, .dest = "gen_script",
                .help = "Run nothing: write a C++ program doing what this command line does through parity's API "
                        "(FILE.cpp) and a CMake snippet building it (FILE.cmake)",
                .metavar = "FILE.cpp"});

    report_args_.add_to(parser);

    // Each runtime's own options (e.g. --ort-threads).
    runner_args_.add_runtime_options_to(parser);

    parser.set_epilog(
        "Examples:\n"
        "  parity run model.onnx --ref --ort                      compare parity's executor with ONNX Runtime\n"
        "  parity run model.onnx --ref --load-outputs trt.json    compare with outputs saved by Polygraphy\n"
        "  parity run model.onnx --ref --ort --onnx-outputs mark all   find the first diverging layer");
  }

  int run(const options::Args& args) override {
    std::optional<std::string> model = args.get("model");
    const std::vector<std::string> runner_names = runner_args_.parse_flags(args);
    const std::vector<std::string> load_outputs = args.list("load_outputs");
    PARITY_CHECK(runner_names.empty() || model, kInvalidArgument, "runners were selected but no MODEL was given");
    if (model) PARITY_CHECK(std::filesystem::exists(*model), kNotFound, "model file '", *model, "' does not exist");
    if (model) model_edit::check_model_type(args, *model);
    if (auto path = args.get("gen_script")) return generate_script(*path, runner_names, args);
    if (runner_names.empty() && load_outputs.empty()) {
      // As Polygraphy: nothing selected is a warning, and the (empty) run passes.
      logger().warning("No runners have been selected. Inference will not be run! (select runners, e.g. --ref "
                       "--ort, or give --load-outputs)");
      return kExitPassed;
    }
    // Every option group is read before anything runs, so a bad value fails fast.
    tools::RunModelsOptions options{.model = model, .runners = runner_names,
                                    .runner_options = runner_args_.parse_runtime_options(args)};
    for (const auto& name : runner_names)
      runners::RunnerRegistry::instance().find(name)->require_available(options.runner_options);
    options.data = data_loader_args_.parse(args);
    options.runs = iteration_args_.parse(args);
    options.runner_options.set(tools::PlanRunnerFeeds{options.data, options.runs.iterations});
    options.compare = compare_args_.parse(args);
    options.report = report_args_.parse(args);
    const compare::IsolationSettings isolation = compare::IsolationArgs().parse(args);
    options.isolation = isolation.isolation;
    options.isolate_crash_prone = isolation.isolate_crash_prone;
    options.postprocess = compare::PostprocessArgs().parse(args);
    options.external_data_dir = args.get("external_data_dir");
    options.save_onnx = args.get("save_onnx");
    options.outputs = args.list("onnx_outputs");
    options.exclude_outputs = args.list("onnx_exclude_outputs");
    if (auto mb = args.get("mark_all_window_mb")) {
      const int64_t v = parse_int(*mb, "--mark-all-window-mb");
      PARITY_CHECK(v > 0, kInvalidArgument, "--mark-all-window-mb must be positive, got ", v);
      options.window_bytes = v << 20;
    }
    options.saved_outputs = load_outputs;
    options.save_inputs = args.get("save_inputs");
    options.save_outputs = args.get("save_outputs");
    options.compare_to_first = args.get_or("compare_to", "next") == "first";
    options.command_line = current_command_line();
    return tools::run_models(options) ? kExitPassed : kExitFailed;
  }

 private:
  // --gen-script: writes the program, runs nothing (runners need not even be available here).
  static int generate_script(const std::string& path, const std::vector<std::string>& runner_names,
                             const options::Args& args) {
    const std::string snippet = tools::write_run_script_for(path, args, runner_names, current_command_line());
    logger().info("Wrote ", path, " and ", snippet, " (build: include(", std::filesystem::path(snippet).filename().string(),
                  ") after find_package(parity), or use it as CMakeLists.txt)");
    return kExitPassed;
  }

  runners::RunnerArgs runner_args_;
  options::DataLoaderArgs data_loader_args_;
  options::IterationArgs iteration_args_{{.iterations = 1,
                                          .iterations_help = "Number of inference iterations for the default data "
                                                             "loader (default 1)",
                                          .warm_up = 0,
                                          .warm_up_help = "Untimed warm-up runs per runner",
                                          .min_iterations = 0}};
  compare::ComparatorCompareArgs compare_args_;
  tools::report::ReportArgs report_args_{
      "per output: statistics, error histograms and heatmaps, verdicts; with mark all: error per layer, memory", true};
};

PARITY_REGISTER_COMMAND(RunCommand);

}  // namespace
}  // namespace parity::cli
