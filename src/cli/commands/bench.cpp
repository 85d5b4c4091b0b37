// `parity bench MODEL... --runners ref,ort,opencv --threads 1,2`: times several runners on the same
// models and inputs in one process and reports median latency per runner and the ratio ref/ort.
// The schedule (fair alternation, one feed for all) is tools/bench/schedule.h, the run and its
// reports tools/bench/run.h; this file holds the options.
#include <algorithm>
#include <cmath>

#include "cli/command.h"
#include "core/formats/file_io.h"
#include "core/text.h"
#include "options/data_loader_args.h"
#include "runners/runner_args.h"
#include "tools/bench/run.h"
#include "tools/report/report_args.h"

namespace parity::cli {
namespace {

using tools::bench::Settings;

class BenchCommand : public Command {
 public:
  std::string name() const override { return "bench"; }
  std::string summary() const override {
    return "Time runners (ref, ort, opencv) on the same models and inputs, alternating, per thread count";
  }

  void add_options(options::ArgParser& parser) override {
    parser.add({.flags = {}, .dest = "models", .help = "ONNX models to time", .metavar = "MODEL",
                .arity = options::Arity::kOneOrMore, .required = true});
    parser.group("Benchmark");
    runner_args_.add_list_to(parser, "Runners to time, comma-separated (default ref,ort,opencv)");
    parser.add({.flags = {"--threads"}, .dest = "thread_counts",
                .help = "Thread counts, comma-separated (default 1,2); each runner gets the count: ref's kernel "
                        "threads, ORT's intra-op threads (inter-op 1, sequential), OpenCV's cv::setNumThreads",
                .metavar = "N", .arity = options::Arity::kOneOrMore});
    iteration_args_.add_iterations_to(parser);
    parser.add({.flags = {"--min-time"},
                .help = "Keep timing (after --iterations) until this many seconds passed per row (default 1)",
                .metavar = "S"});
    parser.add({.flags = {"--duration"},
                .help = "trtexec's spelling of --min-time: time each row for at least S seconds (overrides --min-time)",
                .metavar = "S"});
    parser.add({.flags = {"--percentile"},
                .help = "Latency percentiles to report per runner besides the median and p10-p90, comma-separated "
                        "(trtexec's --percentile, e.g. 90,95,99)",
                .metavar = "P", .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--no-ceiling"},
                .help = "Skip measuring the sgemm ceiling that the GFLOP/s column is compared with (about 1 s per "
                        "thread count)",
                .arity = options::Arity::kFlag});
    iteration_args_.add_warm_up_to(parser);
    parser.add({.flags = {"--profile"},
                .help = "Also time ref per node (the session's per-node profile; medians of up to 9 separate runs) and print "
                        "the operator types and nodes that take longest",
                .arity = options::Arity::kFlag});
    parser.add({.flags = {"--profile-top"}, .help = "Operator types listed by --profile (default 8)", .metavar = "N"});
    parser.add({.flags = {"--concurrent"},
                .help = "Also measure throughput with N threads sharing one ref Session, 1 kernel thread each, "
                        "comma-separated counts (1 is always measured, as the baseline): inferences per second",
                .metavar = "N", .arity = options::Arity::kOneOrMore});
    data_loader_args_.add_to(parser);
    parser.group("Reports");
    parser.add({.flags = {"--markdown"}, .help = "Write the table as Markdown (README-ready)", .metavar = "FILE"});
    parser.add({.flags = {"--json"}, .help = "Write every figure and sample as JSON", .metavar = "FILE"});
    report_args_.add_to(parser);

    // Each runtime's own options (--ort-library, --kernels, --opencv-no-fusion, ...), except those
    // bench defines itself: bench's --threads replaces ref's.
    runner_args_.add_runtime_options_to(parser);
    parser.set_epilog(
        "Examples:\n"
        "  parity bench models/demo.onnx                          ref, ort and opencv at 1 and 2 threads\n"
        "  parity bench det.onnx rec.onnx --input-shapes det=x:[1,3,640,640] rec=x:[1,3,48,320]\n"
        "  parity bench model.onnx --runners ref,ort --threads 1 --profile   where ref spends its time\n"
        "  parity bench model.onnx --runners ref --threads 1 --concurrent 2   inferences/s, 2 threads on one Session\n"
        "--threads sets every runner's thread count: it replaces --ort-threads, --ort-inter-threads (1) and\n"
        "--opencv-threads. ONNX Runtime runs with --ort-config session.force_spinning_stop=1 unless given\n"
        "otherwise, so its idle workers do not spin through the next runner's turn. The JSON report has\n"
        "every sample and each runner's CPU time per wall time.");
  }

  int run(const options::Args& args) override {
    tools::bench::Settings settings = read_settings(args);
    const tools::report::ReportOptions report_options = report_args_.parse(args);
    const tools::bench::BenchOutputs outputs{.measure_ceiling = !args.flag("no_ceiling"),
                                             .markdown = args.get("markdown"),
                                             .json = args.get("json"),
                                             .report = report_options.path,
                                             .command_line = current_command_line()};
    return tools::bench::run_bench(settings, outputs, runner_args_.parse_runtime_options(args)) ? kExitPassed
                                                                                             : kExitFailed;
  }

 private:
  /// Thread counts from comma-separated values of --NAME (each 1..1024); at least one.
  static std::vector<int> thread_counts(const std::vector<std::string>& values, const std::string& name) {
    std::vector<int> counts;
    for (const auto& value : values)
      for (const auto& t : split_list(value, "--" + name)) {
        if (t.empty()) continue;
        const int64_t n = parse_int(t, "--" + name);
        PARITY_CHECK(n >= 1 && n <= 1024, kInvalidArgument, "--", name, " must be between 1 and 1024, got ", t);
        counts.push_back(static_cast<int>(n));
      }
    PARITY_CHECK(!counts.empty(), kInvalidArgument, "--", name, ": no thread count given");
    return counts;
  }

  Settings read_settings(const options::Args& args) const {
    Settings s;
    s.models = args.list("models");
    for (const auto& m : s.models) formats::check_readable_file(m);
    s.runners = runner_args_.parse_list(args, "ref,ort,opencv");
    s.isa = args.get_or("isa", "native");

    s.threads = thread_counts(args.has("thread_counts") ? args.list("thread_counts") : std::vector<std::string>{"1,2"}, "threads");
    if (args.has("concurrent")) s.concurrent = thread_counts(args.list("concurrent"), "concurrent");

    const options::IterationOptions runs = iteration_args_.parse(args);
    s.iterations = runs.iterations;
    s.warm_up = runs.warm_up;
    if (auto top = args.get("profile_top")) {
      s.profile_top = parse_int(*top, "--profile-top");
      PARITY_CHECK(s.profile_top >= 1, kInvalidArgument, "--profile-top must be at least 1, got ", s.profile_top);
    }
    for (const char* dest : {"min_time", "duration"})
      if (auto t = args.get(dest)) {
        const std::string flag = dest == std::string("duration") ? "--duration" : "--min-time";
        s.min_time = parse_double(*t, flag);
        PARITY_CHECK(s.min_time >= 0 && std::isfinite(s.min_time), kInvalidArgument, flag,
                     " must be 0 or more seconds, got ", *t);
      }
    for (const auto& value : args.list("percentile"))
      for (const auto& p : split_list(value, "--percentile")) {
        if (p.empty()) continue;
        const double q = parse_double(p, "--percentile");
        PARITY_CHECK(q >= 0 && q <= 100, kInvalidArgument, "--percentile must be between 0 and 100, got ", p);
        s.percentiles.push_back(q);
      }
    s.data = data_loader_args_.parse(args);
    s.shape_used.assign(s.data.input_shapes.size(), false);
    for (const auto& shape : s.data.input_shapes)
      PARITY_CHECK(std::any_of(s.models.begin(), s.models.end(),
                               [&](const std::string& model) { return shape.applies_to(model); }),
                   kInvalidArgument, "--input-shapes '", shape.text, "': no model given is called '", shape.model, "'");
    s.profile = args.flag("profile");
    for (const char* dest : {"markdown", "json"})
      if (auto path = args.get(dest)) formats::check_writable_location(*path);
    return s;
  }

  runners::RunnerArgs runner_args_;
  tools::report::ReportArgs report_args_{"latency distributions per runner and thread count, ratios"};
  options::DataLoaderArgs data_loader_args_{{.per_model_shapes = true, .load_inputs = false}};
  options::IterationArgs iteration_args_{
      {.iterations = 10,
       .iterations_help = "Minimum timed iterations per runner (default 10)",
       .warm_up = 2,
       .warm_up_help = "Untimed runs per runner before timing (default 2; at least one runs, checking the feed)"}};
};

PARITY_REGISTER_COMMAND(BenchCommand);

}  // namespace
}  // namespace parity::cli
