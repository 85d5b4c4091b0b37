// `parity validate MODEL --dataset PATH --runners ref,ort ...`: a model against a whole dataset,
// streamed, on one machine or many (mpirun/srun); and `parity validate merge`, which merges the
// summaries of shards. The work is in tools/validate.
#include "cli/command.h"
#include "core/formats/file_io.h"
#include "core/logger.h"
#include "tools/report/report.h"
#include "tools/report/validate_report.h"
#include "tools/validate/summary.h"
#include "tools/validate/validate_args.h"

namespace parity::cli {
namespace {

class ValidateCommand : public Command {
 public:
  std::string name() const override { return "validate"; }
  std::string summary() const override {
    return "Validate a model on a whole dataset against a reference runner (streamed; MPI or shards to scale out)";
  }
  void add_options(options::ArgParser& parser) override {
    args_.add_to(parser);
    runners::RunnerArgs().add_runtime_options_to(parser);
    parser.set_epilog(
        "Examples:\n"
        "  parity validate model.onnx --dataset samples/ --runners ref,ort --save-summary s.json\n"
        "  parity validate model.onnx --dataset images/ --resize 224x224 --mean 0.485,0.456,0.406 --std 0.229,0.224,0.225 \\\n"
        "      --labels labels.txt --top-k 5 --report r.html\n"
        "  mpirun -np 8 parity validate model.onnx --dataset samples/ --runners ref,ort --save-summary s.json\n"
        "  parity validate model.onnx --dataset samples/ --shard 0/4 --save-summary s0.json   (then: validate merge)");
  }
  int run(const options::Args& args) override {
    tools::validation::ValidateJob job = args_.parse(args);
    job.config.runner_options = runners::RunnerArgs().parse_runtime_options(args);
    job.command_line = current_command_line();
    return tools::validation::run_validate_job(std::move(job)) ? kExitPassed : kExitFailed;
  }

 private:
  tools::validation::ValidateArgs args_;
};

class ValidateMergeCommand : public Command {
 public:
  std::string name() const override { return "validate merge"; }
  std::string summary() const override { return "Merge the summaries of validate --shard runs into one summary"; }
  void add_options(options::ArgParser& parser) override {
    parser.add({.flags = {}, .dest = "summaries", .help = "Summaries of disjoint shards", .metavar = "SUMMARY",
                .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"-o", "--output"}, .help = "Merged summary JSON", .metavar = "S.json", .required = true});
    parser.add({.flags = {"--report"}, .help = "HTML (or JSON) report of the merged summary", .metavar = "R.html"});
  }
  int run(const options::Args& args) override {
    const std::string output = *args.get("output");
    if (auto report = args.get("report")) tools::report::check_report_path(*report);
    const auto merged = tools::validation::merge_summaries(args.list("summaries"));
    formats::write_binary_file(output, merged.dump(2) + "\n");
    logger().info("Merged ", args.list("summaries").size(), " summaries into ", output, ": ",
                  merged["samples"]["done"].get<int64_t>(), " of ", merged["dataset"]["samples"].get<int64_t>(),
                  " samples done", merged["complete"].get<bool>() ? "" : " (incomplete: shards are missing)");
    if (auto report = args.get("report")) {
      tools::report::Report r("parity validate: " + merged["model"].get<std::string>(), current_command_line());
      r.add_section(tools::report::validate_section(merged));
      r.write(*report);
    }
    return merged["passed"].get<bool>() ? kExitPassed : kExitFailed;
  }
};

PARITY_REGISTER_COMMAND(ValidateCommand);
PARITY_REGISTER_COMMAND(ValidateMergeCommand);

}  // namespace
}  // namespace parity::cli
