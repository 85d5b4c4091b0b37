// `parity debug repeat` (Polygraphy's `debug repeat`): runs a check command again and again,
// sorting what each run leaves behind into good/ and bad/, until a good run, a bad run or a count.
#pragma once

#include <cstddef>
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

/// Called after each run with its 1-based number and outcome.
using RepeatObserver = std::function<void(size_t run, const CheckOutcome& outcome)>;

/// Runs `check` until `until` says stop. "{iteration}" in the command is replaced by the run's
/// number. A bound of `max_runs` applies to good/bad (0: none).
RepeatSummary repeat_check(const CheckCommand& check, const RepeatUntil& until, const ArtifactSorter& artifacts,
                           const RepeatObserver& observe, size_t max_runs = 0);

}  // namespace parity::tools::debug
