// `parity debug repeat` (Polygraphy's `debug repeat`): runs a check command again and again,
// sorting what each run leaves behind into good/ and bad/, until a good run, a bad run or a count.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>

#include "tools/debug/artifacts.h"
#include "tools/debug/check_command.h"

namespace parity::tools::debug {

/// When to stop: at the first good run, the first bad run, or after `count` runs.
struct RepeatUntil {
  enum class Kind { kGood, kBad, kCount } kind = Kind::kCount;
  size_t count = 0;
};

/// Parses --until: "good", "bad" or a positive count (kInvalidArgument otherwise).
RepeatUntil parse_repeat_until(const std::string& text);

struct RepeatSummary {
  size_t runs = 0;
  size_t passed = 0;
};

/// Called after each run with its 1-based number, outcome and duration.
using RepeatObserver = std::function<void(size_t run, const CheckOutcome& outcome, double seconds)>;

/// Runs `check` until `until` says stop. "{iteration}" in the command is replaced by the run's
/// number. A bound of `max_runs` applies to good/bad (0: none). With `iteration_info`, each run
/// finds there Polygraphy's iteration file, {"iteration": N} with N counted from 0, removed after
/// the run.
RepeatSummary repeat_check(const CheckCommand& check, const RepeatUntil& until, const ArtifactSorter& artifacts,
                           const RepeatObserver& observe, size_t max_runs = 0,
                           const std::filesystem::path& iteration_info = {});

/// Polygraphy's closing line: "Finished N iteration(s) | Passed: P/N | Pass Rate: X%", the rate
/// written as Python writes a float (100.0, 33.333333333333336).
std::string repeat_summary_line(const RepeatSummary& summary);

}  // namespace parity::tools::debug
