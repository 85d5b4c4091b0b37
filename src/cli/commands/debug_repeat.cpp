// `parity debug repeat --until N|good|bad --check CMD...`: runs a command repeatedly, sorting the
// artifacts it writes into good/ and bad/ by its outcome (Polygraphy's `debug repeat`), e.g. to
// catch a flaky runtime or collect the outputs of runs that differ.
#include <fmt/format.h>

#include "cli/command.h"
#include "core/logger.h"
#include "core/text.h"
#include "tools/debug/repeat.h"

namespace parity::cli {
namespace {

using namespace parity::tools::debug;

std::vector<int> parse_repeat_codes(const options::Args& args, const std::string& dest, const std::string& flag) {
  std::vector<int> codes;
  for (const auto& text : args.list(dest)) codes.push_back(static_cast<int>(parse_int(text, flag)));
  return codes;
}

class DebugRepeatCommand : public Command {
 public:
  std::string name() const override { return "debug repeat"; }
  std::string summary() const override { return "Run a command repeatedly, sorting its artifacts into good and bad"; }

  void add_options(options::ArgParser& parser) override {
    parser.group("Repeat");
    parser.add({.flags = {"--until"},
                .help = "Stop at the first good run (good), the first bad run (bad), or after N runs",
                .metavar = "UNTIL", .required = true});
    parser.add({.flags = {"--max-runs"}, .help = "With --until good/bad: give up after this many runs (default: never)",
                .metavar = "N"});
    parser.add({.flags = {"--check"},
                .help = "The command to run (non-zero exit status = bad); {iteration} is replaced by the run's "
                        "number. Must come last",
                .metavar = "CMD", .arity = options::Arity::kRemainder, .required = true});
    parser.add({.flags = {"--fail-code"}, .help = "Only these exit statuses mean a bad run", .metavar = "N",
                .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--ignore-fail-code"}, .help = "Exit statuses that do not mean a bad run", .metavar = "N",
                .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--fail-regex"},
                .help = "A failing status counts only when the output matches one of these regular expressions",
                .metavar = "REGEX", .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--show-output"}, .help = "Show the command's output for every run", .arity = options::Arity::kFlag});
    parser.add({.flags = {"--iteration-info", "--iter-info"}, .dest = "iteration_info",
                .help = "Before each run, write {\"iteration\": N} (N from 0) to this JSON file for the command to "
                        "read; removed after the run",
                .metavar = "PATH"});
    parser.add({.flags = {"--artifacts"},
                .help = "Files the command writes, moved after each run into good/ or bad/ of --artifacts-dir as "
                        "<stem>_iter<N>_rc<status><ext>",
                .metavar = "PATH", .arity = options::Arity::kOneOrMore});
    parser.add({.flags = {"--artifacts-dir"}, .help = "Folder receiving good/ and bad/ artifacts", .metavar = "DIR",
                .default_value = "polygraphy_artifacts"});
  }

  int run(const options::Args& args) override {
    const RepeatUntil until = parse_repeat_until(args.get_or("until", ""));
    size_t max_runs = 0;
    if (auto text = args.get("max_runs")) {
      const int64_t n = parse_int(*text, "--max-runs");
      PARITY_CHECK(n >= 1, kInvalidArgument, "--max-runs must be 1 or more, got ", n);
      max_runs = static_cast<size_t>(n);
    }
    const CheckCommand check{args.list("check"), parse_repeat_codes(args, "fail_code", "--fail-code"),
                             parse_repeat_codes(args, "ignore_fail_code", "--ignore-fail-code"), args.list("fail_regex")};
    validate_check_command(check);
    const ArtifactSorter artifacts(args.list("artifacts"), args.get_or("artifacts_dir", "polygraphy_artifacts"));
    const bool show_output = args.flag("show_output");
    const RepeatSummary summary = repeat_check(
        check, until, artifacts,
        [&](size_t run, const CheckOutcome& outcome, double seconds) {
          if (show_output) logger().info(outcome.output);
          // Polygraphy's per-iteration verdicts, with the exit status.
          if (outcome.failed)
            logger().error("FAILED | Iteration ", run, " | Duration ", seconds, "s | exit status ", outcome.exit_status);
          else
            logger().finish("PASSED | Iteration ", run, " | Duration ", seconds, "s | exit status ", outcome.exit_status);
        },
        max_runs, args.get_or("iteration_info", ""));
    logger().finish(repeat_summary_line(summary));
    return kExitPassed;
  }
};

PARITY_REGISTER_COMMAND(DebugRepeatCommand);

}  // namespace
}  // namespace parity::cli
