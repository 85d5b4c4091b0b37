#include "tools/debug/repeat.h"

#include "core/status.h"
#include "core/text.h"

namespace parity::tools::debug {

RepeatUntil parse_repeat_until(const std::string& text) {
  if (text == "good") return {RepeatUntil::Kind::kGood, 0};
  if (text == "bad") return {RepeatUntil::Kind::kBad, 0};
  const int64_t count = parse_int(text, "--until");
  PARITY_CHECK(count >= 1, kInvalidArgument, "--until: expected good, bad or a positive count, got '", text, "'");
  return {RepeatUntil::Kind::kCount, static_cast<size_t>(count)};
}

RepeatSummary repeat_check(const CheckCommand& check, const RepeatUntil& until, const ArtifactSorter& artifacts,
                           const RepeatObserver& observe, size_t max_runs) {
  RepeatSummary summary;
  for (;;) {
    if (until.kind == RepeatUntil::Kind::kCount && summary.runs >= until.count) break;
    if (until.kind != RepeatUntil::Kind::kCount && max_runs > 0 && summary.runs >= max_runs) break;
    const size_t run = ++summary.runs;
    const CheckOutcome outcome = run_check_command(check, substitute(check.argv, {{"iteration", std::to_string(run)}}));
    summary.passed += !outcome.failed;
    artifacts.sort(run, outcome.failed, outcome.exit_status);
    if (observe) observe(run, outcome);
    if (until.kind == RepeatUntil::Kind::kGood && !outcome.failed) break;
    if (until.kind == RepeatUntil::Kind::kBad && outcome.failed) break;
  }
  return summary;
}

}  // namespace parity::tools::debug
