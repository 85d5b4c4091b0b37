// `parity optimize SOURCE`: Triton Model Navigator's optimize for C++ users. From an ONNX model or a
// TorchScript .pt and a data loader, produce every target format, test its conversion and
// correctness against the source on every runtime, profile it, and record everything in a
// workspace (tools/navigator/pipeline.h) that `parity package save` turns into a .nav package.
#include <filesystem>

#include "cli/command.h"
#include "cli/commands/package_common.h"
#include "compare/compare_args.h"
#include "compare/feed_files.h"
#include "core/logger.h"
#include "core/text.h"
#include "options/byte_size.h"
#include "options/data_loader_args.h"
#include "runners/runner_args.h"
#include "tools/navigator/formats.h"
#include "tools/navigator/package.h"
#include "tools/navigator/pipeline.h"
#include "tools/report/package_report.h"
#include "tools/report/report_args.h"

namespace parity::cli {
namespace {

namespace nav = tools::navigator;

std::vector<std::string> list_of(const options::Args& args, const std::string& dest) {
  std::vector<std::string> items;
  for (const auto& value : args.list(dest))
    for (auto& item : split_list(value, "--" + dest)) items.push_back(item);
  return items;
}

class OptimizeCommand : public Command {
 public:
  std::string name() const override { return "optimize"; }
  std::string summary() const override {
    return "Export a model to verified, profiled formats in a navigator workspace (Model Navigator)";
  }

  void add_options(options::ArgParser& parser) override {
    parser.add({.flags = {}, .dest = "source", .help = "ONNX model or TorchScript .pt to optimize", .metavar = "SOURCE",
                .required = true});
    parser.group("Workspace");
    parser.add({.flags = {"--workspace"}, .help = "Workspace folder (default: <source name>.nav.workspace)", .metavar = "DIR"});
    parser.add({.flags = {"--override-workspace"}, .help = "Replace an existing workspace", .arity = options::Arity::kFlag});
    parser.group("Samples");
    parser.add({.flags = {"--samples"}, .help = ".npz files, folders of .npz files or Polygraphy inputs JSON to take samples from "
                                                 "(default: seeded random data)",
                .metavar = "PATH", .arity = options::Arity::kOneOrMore});
    data_loader_args_.add_to(parser);
    parser.group("Batching and samples");
    parser.add({.flags = {"--sample-count"}, .help = "Correctness samples kept (and random feeds generated)",
                .metavar = "N", .default_value = "10"});
    parser.add({.flags = {"--batch-dim"}, .help = "Batch axis of every input, or 'none'", .metavar = "N",
                .default_value = "0"});
    parser.add({.flags = {"--max-batch-size"}, .help = "Largest batch size to profile (default 8 for a dynamic batch axis)",
                .metavar = "N"});
    parser.add({.flags = {"--dynamic-axes"}, .help = "More dynamic axes of an input, as name:axis,axis (TorchScript sources)",
                .metavar = "SPEC", .arity = options::Arity::kOneOrMore});
    parser.group("Formats and runtimes");
    parser.add({.flags = {"--target-formats"}, .help = "Formats to produce (default: all): torchscript, onnx, onnx-sanitized, "
                                                      "onnx-fp16, plan-fp32, plan-fp16, plan-bf16, plan-int8",
                .metavar = "FORMAT", .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--torchscript"}, .help = "A TorchScript file of the same model as the ONNX source (traced or "
                                                   "scripted from the same module): the torchscript format, run on LibTorch",
                .metavar = "PT"});
    parser.add({.flags = {"--runners"}, .help = "Runtimes to test every format on (default: ref, ort, opencv, torch)",
                .metavar = "NAME", .arity = options::Arity::kOneOrMore});
    tolerance_args_.add_to(parser);
    parser.add({.flags = {"--cell-timeout"}, .help = "Seconds one format x runtime may take before it is killed",
                .metavar = "S"});
    parser.add({.flags = {"--cell-memory-limit"}, .help = "Address-space limit of each format x runtime subprocess (e.g. 4G)",
                .metavar = "SIZE"});
    parser.group("Profiling");
    parser.add({.flags = {"--no-profiling"}, .help = "Skip the performance step", .arity = options::Arity::kFlag});
    parser.add({.flags = {"--measurement-mode"}, .help = "Windows of a fixed time or of a fixed count of inferences",
                .metavar = "MODE", .choices = {"time_windows", "count_windows"}, .default_value = "time_windows"});
    parser.add({.flags = {"--window-ms"}, .help = "Length of a time window", .metavar = "MS", .default_value = "500"});
    parser.add({.flags = {"--window-count"}, .help = "Inferences of a count window", .metavar = "N",
                .default_value = "50"});
    parser.add({.flags = {"--stability-percentage"}, .help = "The last 3 windows must agree within this",
                .metavar = "PCT", .default_value = "10"});
    parser.add({.flags = {"--max-trials"}, .help = "Windows per batch size before a result is flagged unstable",
                .metavar = "N", .default_value = "10"});
    parser.add({.flags = {"--throughput-cutoff"}, .help = "Relative throughput gain below which a larger batch saturates",
                .metavar = "F", .default_value = "0.05"});
    runners::RunnerArgs().add_runtime_options_to(parser);  // --ort-threads, --torch-threads, ...
    report_args_.add_to(parser);
  }

  int run(const options::Args& args) override {
    const tools::report::ReportOptions report_options = report_args_.parse(args);
    nav::OptimizeRequest request;
    request.source = args.get_or("source", "");
    const auto data = data_loader_args_.parse(args);
    request.config = config_from(args);
    request.workspace = args.get_or("workspace", request.source.filename().string() + ".nav.workspace");
    request.override_workspace = args.flag("override_workspace");
    request.quiet = !logger().enabled(Severity::kInfo);
    request.runner_options = runners::RunnerArgs().parse_runtime_options(args);
    options::DataLoaderOptions loader = data;
    for (const auto& path : args.list("samples")) loader.load_inputs.push_back(path);
    request.feed_count = loader.load_inputs.empty() ? request.config.sample_count : std::numeric_limits<int64_t>::max();
    request.data = compare::make_feed_source(loader, request.feed_count);
    if (nav::source_kind_of(request.source) == "torchscript")
      for (const auto& shape : data.input_shapes) request.torchscript_inputs.add(shape.input, DType::kFloat32, DimShape(shape.shape));
    if (auto timeout = args.get_double("cell_timeout")) request.isolation.timeout_s = *timeout;
    if (auto size = args.get("cell_memory_limit")) request.isolation.memory_limit_bytes = parse_size(*size, "--cell-memory-limit");

    const nav::WorkspaceStatus status = nav::optimize(request);
    package_cli::print_status_table(status);
    if (report_options.path) {
      tools::report::Report report("parity optimize", current_command_line());
      report.add_section(tools::report::package_section(status));
      report.write(*report_options.path);
      logger().info("Wrote report: ", *report_options.path);
    }
    const nav::PackageDescriptor package(request.workspace);
    if (package.any_passed()) return kExitPassed;
    logger().error("no format passed its conversion and correctness tests on any runtime");
    return kExitFailed;
  }

 private:
  compare::ToleranceArgs tolerance_args_{"a format must meet", "measured only", "measured only"};

  nav::NavigatorConfig config_from(const options::Args& args) const {
    nav::NavigatorConfig config;
    config.target_formats = list_of(args, "target_formats");
    for (const auto& f : config.target_formats) nav::format_info(f);  // refuses unknown names
    config.runtimes = list_of(args, "runners");
    config.torchscript_copy = args.get_or("torchscript", "");
    const std::string batch = args.get_or("batch_dim", "0");
    if (batch != "none") config.batch_dim = parse_int(batch, "--batch-dim");
    PARITY_CHECK(!config.batch_dim || *config.batch_dim >= 0, kInvalidArgument, "--batch-dim must be >= 0 or 'none'");
    if (auto max = args.get("max_batch_size")) config.max_batch_size = parse_int(*max, "--max-batch-size");
    else config.max_batch_size = 8;
    PARITY_CHECK(config.max_batch_size >= 1, kInvalidArgument, "--max-batch-size must be at least 1");
    config.sample_count = parse_int(args.get_or("sample_count", "10"), "--sample-count");
    PARITY_CHECK(config.sample_count >= 1, kInvalidArgument, "--sample-count must be at least 1");
    if (auto seed = args.get("seed")) config.seed = parse_int(*seed, "--seed");
    const compare::Tolerances tolerances = tolerance_args_.parse(args);
    config.atol = tolerances.atol;
    config.rtol = tolerances.rtol;
    for (const auto& spec : args.list("dynamic_axes")) {
      const auto [input, axes] = split_name_value(spec);
      PARITY_CHECK(!input.empty() && !axes.empty(), kInvalidArgument, "--dynamic-axes ", spec, ": expected name:axis,axis");
      for (const auto& axis : split_list(axes, "--dynamic-axes " + spec))
        config.dynamic_axes[input].push_back(parse_int(axis, "--dynamic-axes " + spec));
    }
    config.run_profiling = !args.flag("no_profiling");
    config.measurement_mode = args.get_or("measurement_mode", "time_windows");
    config.window_ms = parse_int(args.get_or("window_ms", "500"), "--window-ms");
    config.window_count = parse_int(args.get_or("window_count", "50"), "--window-count");
    config.stability_percentage = parse_double(args.get_or("stability_percentage", "10"), "--stability-percentage");
    config.max_trials = static_cast<int>(parse_int(args.get_or("max_trials", "10"), "--max-trials"));
    config.throughput_cutoff = parse_double(args.get_or("throughput_cutoff", "0.05"), "--throughput-cutoff");
    PARITY_CHECK(config.window_ms > 0 && config.window_count > 0 && config.max_trials > 0, kInvalidArgument,
                 "--window-ms, --window-count and --max-trials must be positive");
    return config;
  }

  options::DataLoaderArgs data_loader_args_;
  tools::report::ReportArgs report_args_{"formats, steps, measured tolerances, latency and throughput per batch size"};
};

PARITY_REGISTER_COMMAND(OptimizeCommand);

}  // namespace
}  // namespace parity::cli
