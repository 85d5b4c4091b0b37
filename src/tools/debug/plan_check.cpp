#include "tools/debug/plan_check.h"

#include <memory>
#include <utility>

#include "core/formats/file_io.h"
#include "core/text.h"
#include "runtime/plan/plan_file.h"

namespace parity::tools::debug {

namespace {

using options::Given;

// A qualifier of --check: given without it, an error.
template <class Read>
options::Group<PlanCheckSettings>::Bind qualifier(Read read) {
  return [read](PlanCheckSettings& s, const Given& given) {
    if (!given.given()) return;
    PARITY_CHECK(s.check.has_value(), kInvalidArgument, given.flag, " qualifies --check CMD..., which is missing");
    read(*s.check, given);
  };
}

std::vector<int> parse_codes(const Given& given) {
  std::vector<int> codes;
  for (const auto& text : given.values) codes.push_back(static_cast<int>(parse_int(text, given.flag)));
  return codes;
}

/// The last `count` lines of a check's output.
std::string tail_lines(const std::string& text, size_t count) {
  size_t at = text.size();
  for (size_t lines = 0; at > 0 && lines <= count; --at)
    if (text[at - 1] == '\n') ++lines;
  return text.substr(at == 0 ? 0 : at + 1);
}

}  // namespace

PlanCheckArgs::PlanCheckArgs(const std::string& default_artifact) {
  section("External check (instead of the built-in comparison)");
  add({.flags = {"--check"},
       .help = "Command deciding whether a plan fails (non-zero exit status = fails), e.g. parity run {plan} "
               "--ref --load-outputs golden.json. {plan} is replaced by the candidate plan's path "
               "(--iter-artifact), {model} by the ONNX model's. Must come last",
       .metavar = "CMD", .arity = options::Arity::kRemainder},
      [](PlanCheckSettings& s, const Given& given) {
        if (given.given()) s.check = CheckCommand{.argv = given.values};
      });
  add({.flags = {"--iter-artifact"}, .help = "Where each candidate plan is written for the check",
       .metavar = "PATH", .default_value = default_artifact},
      options::field(&PlanCheckSettings::iter_artifact));
  add({.flags = {"--fail-code"}, .help = "Only these exit statuses mean the plan fails", .metavar = "N",
       .arity = options::Arity::kOneOrMore},
      qualifier([](CheckCommand& check, const Given& given) { check.fail_codes = parse_codes(given); }));
  add({.flags = {"--ignore-fail-code"}, .help = "Exit statuses that do not mean a failure", .metavar = "N",
       .arity = options::Arity::kOneOrMore},
      qualifier([](CheckCommand& check, const Given& given) { check.ignore_fail_codes = parse_codes(given); }));
  add({.flags = {"--fail-regex"},
       .help = "A failing status counts only when the check's output matches one of these regular expressions",
       .metavar = "REGEX", .arity = options::Arity::kOneOrMore},
      qualifier([](CheckCommand& check, const Given& given) { check.fail_regex = given.values; }));
  add({.flags = {"--show-output"}, .help = "Show the check command's output for every check",
       .arity = options::Arity::kFlag},
      options::field(&PlanCheckSettings::show_output));
  check([](PlanCheckSettings& s) {
    if (!s.check) return;
    validate_check_command(*s.check);
    formats::check_writable_location(s.iter_artifact);
  });
}

PlanJudge plan_check_judge(CheckCommand check, std::string artifact, std::string model_path, bool show_output,
                           std::function<void(const std::string&)> log) {
  return [check = std::move(check), artifact = std::move(artifact), model_path = std::move(model_path), show_output,
          log = std::move(log)](const runtime::Session& plan) {
    formats::forget_input(artifact);  // the previous check may have read it
    runtime::plan::save_plan(plan, artifact, std::filesystem::path(model_path).filename().string());
    const CheckOutcome outcome = run_check_command(check, substitute(check.argv, {{"plan", artifact}, {"model", model_path}}));
    if (log) {
      if (show_output) log(outcome.output);
      log("check: exit status " + std::to_string(outcome.exit_status) + " -> " + (outcome.failed ? "fails" : "passes") +
          (outcome.failed && !show_output ? "\n" + tail_lines(outcome.output, 5) : ""));
    }
    return !outcome.failed;
  };
}

}  // namespace parity::tools::debug
