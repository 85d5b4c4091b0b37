#include "tools/debug/repeat.h"

#include <chrono>

#include <fmt/format.h>

#include "core/formats/file_io.h"
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
                           const RepeatObserver& observe, size_t max_runs, const std::filesystem::path& iteration_info) {
  RepeatSummary summary;
  for (;;) {
    if (until.kind == RepeatUntil::Kind::kCount && summary.runs >= until.count) break;
    if (until.kind != RepeatUntil::Kind::kCount && max_runs > 0 && summary.runs >= max_runs) break;
    const size_t run = ++summary.runs;
    if (!iteration_info.empty())
      formats::write_binary_file(iteration_info.string(), str_cat("{\"iteration\": ", run - 1, "}\n"));
    const auto start = std::chrono::steady_clock::now();
    const CheckOutcome outcome = run_check_command(check, substitute(check.argv, {{"iteration", std::to_string(run)}}));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!iteration_info.empty()) {
      std::error_code ec;
      std::filesystem::remove(iteration_info, ec);
    }
    summary.passed += !outcome.failed;
    artifacts.sort(run, outcome.failed, outcome.exit_status);
    if (observe) observe(run, outcome, seconds);
    if (until.kind == RepeatUntil::Kind::kGood && !outcome.failed) break;
    if (until.kind == RepeatUntil::Kind::kBad && outcome.failed) break;
  }
  return summary;
}

std::string repeat_summary_line(const RepeatSummary& summary) {
  const double rate = summary.runs ? 100.0 * static_cast<double>(summary.passed) / static_cast<double>(summary.runs) : 0.0;
  std::string text = fmt::format("{}", rate);  // shortest round-trip digits, as Python's repr
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return str_cat("Finished ", summary.runs, " iteration(s) | Passed: ", summary.passed, "/", summary.runs,
                 " | Pass Rate: ", text, "%");
}

}  // namespace parity::tools::debug
