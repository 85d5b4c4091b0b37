// `parity test onnx-backend`: runs the ONNX backend test layout (model.onnx +
// test_data_set_N/{input,output}_K.pb) against any registered runner and reports each test
// (tools/conformance/backend_tests.h).
#include <cstdio>
#include <string>

#include "cli/command.h"
#include "core/progress.h"
#include "core/text.h"
#include "compare/compare_args.h"
#include "runners/ref/ref_runner.h"
#include "runners/registry.h"
#include "runners/runner_args.h"
#include "tools/conformance/backend_tests.h"
#include "tools/report/conformance_report.h"
#include "tools/report/report_args.h"

namespace parity::cli {

namespace {

using tools::BackendOutcome;
using tools::BackendTestResult;

constexpr const char* kDefaultDataRoot = "/usr/share/libonnx-testdata/data";
constexpr const char* kDefaultKinds[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};

void print_result(const BackendTestResult& r) {
  Progress::clear_active();  // results go to stdout, possibly the terminal the progress line is on
  switch (r.outcome) {
    case BackendOutcome::kPass: std::printf("[pass] %s\n", r.id.c_str()); break;
    case BackendOutcome::kFail:
      std::printf("[fail] %s: max error %g: %s\n", r.id.c_str(), r.max_abs_error, r.message.c_str());
      break;
    case BackendOutcome::kError: std::printf("[error] %s: %s\n", r.id.c_str(), r.message.c_str()); break;
    case BackendOutcome::kSkip: std::printf("[skipped] %s: %s\n", r.id.c_str(), r.message.c_str()); break;
  }
  std::fflush(stdout);
}

void write_report(const std::string& path, const std::string& runner, const std::vector<BackendTestResult>& results) {
  std::vector<tools::report::ConformanceCase> cases;
  for (const auto& r : results)
    cases.push_back({.id = r.id,
                     .outcome = tools::backend_outcome_name(r.outcome),
                     .op_type = r.op_type,
                     .family = r.op_type.empty() ? "other" : tools::report::operator_family(r.op_type, r.domain),
                     .message = r.message,
                     .max_abs_error = r.max_abs_error,
                     .seconds = r.seconds});
  tools::report::Report report("parity test onnx-backend: " + runner, current_command_line());
  report.add_section(tools::report::conformance_section(runner, cases));
  report.write(path);
}

class BackendTestCommand : public Command {
 public:
  std::string name() const override { return "test onnx-backend"; }
  std::string summary() const override {
    return "Run ONNX backend conformance tests (model.onnx + test_data_set_N) with a runner";
  }
  void add_options(options::ArgParser& parser) override {
    parser.add({.dest = "dirs",
                .help = "Test folders, or folders of test folders (default: the node, pytorch-converted, "
                        "pytorch-operator and simple folders of " + std::string(kDefaultDataRoot) + ")",
                .metavar = "DIR",
                .arity = options::Arity::kAny});
    parser.add({.flags = {"--runner"}, .help = "Runner to test (a name from the runner registry)",
                .metavar = "NAME", .default_value = "ref"});
    parser.add({.flags = {"--filter"}, .help = "Only tests whose id (<kind>/<test>) matches this regex (search)",
                .metavar = "REGEX"});
    parser.add({.flags = {"--skip-file"},
                .help = "Skip file ('<kind>/<test>  # reason' per line); default: the one shipped with parity",
                .metavar = "PATH"});
    parser.add({.flags = {"--no-skip-file"}, .help = "Run every test, ignoring the skip file", .arity = options::Arity::kFlag});
    tolerance_args_.add_to(parser);
    report_args_.add_to(parser);
    runners::RunnerArgs().add_runtime_options_to(parser);
  }

  int run(const options::Args& args) override {
    const tools::report::ReportOptions report = report_args_.parse(args);
    tools::BackendTestOptions options;
    options.dirs = args.list("dirs");
    if (options.dirs.empty())
      for (const char* kind : kDefaultKinds) options.dirs.push_back(std::string(kDefaultDataRoot) + "/" + kind);
    options.filter = args.get("filter");
    if (!args.flag("no_skip_file")) {
      if (auto path = args.get("skip_file")) options.skips = compare::BackendSkips::load(*path);
      else if (auto def = tools::default_backend_skip_file()) options.skips = compare::BackendSkips::load(*def);
    }
    options.runner = args.get_or("runner", "ref");
    options.runner_options = runners::RunnerArgs().parse_runtime_options(args);
    const compare::Tolerances tolerances = tolerance_args_.parse(args);
    options.atol = tolerances.atol;
    options.rtol = tolerances.rtol;
    if (options.runner == "ref") {
      // ref's own options group has read and checked --threads and --precision.
      const auto ref = options.runner_options.get_or(runners::RefRunnerOptions{});
      options.session.threads = ref.threads;
      options.session.precision = ref.precision;
      // The suite's expected outputs are numpy's, node by node in the model's types: float16 and
      // bfloat16 cases check those per-layer semantics, not the float32-carried lowering.
      options.session.reduced_floats = runtime::ReducedFloatCompute::kStrict;
    }
    options.identify_operators = report.path.has_value();
    options.on_result = print_result;

    const std::vector<BackendTestResult> results = tools::run_backend_tests(options);
    int counts[4] = {0, 0, 0, 0};
    for (const auto& r : results) ++counts[static_cast<int>(r.outcome)];
    std::printf("Summary: %d passed, %d failed, %d errored, %d skipped (%d total)\n", counts[0], counts[1], counts[2],
                counts[3], static_cast<int>(results.size()));
    std::fflush(stdout);
    if (report.path) write_report(*report.path, options.runner, results);
    return counts[1] == 0 && counts[2] == 0 ? kExitPassed : kExitFailed;
  }

 private:
  tools::report::ReportArgs report_args_{"pass/fail per operator family, the failing tests"};
  compare::ToleranceArgs tolerance_args_{"of every output", "the test's data.json, else 1e-7",
                                         "the test's data.json, else 1e-3"};
};

}  // namespace

PARITY_REGISTER_COMMAND(BackendTestCommand);

}  // namespace parity::cli
