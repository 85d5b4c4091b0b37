// The comparison options (Polygraphy's ComparatorCompareArgs): --validate, --fail-fast, --compare
// and each comparison function's tolerances, "[name:]value" per output. It lives in compare/
// because its parsed value is the compare layer's option structs and CompareFunc.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compare/compare_func.h"
#include "options/group.h"

namespace parity::compare {

/// What the comparison options say.
struct CompareSettings {
  std::string func = "simple";  // simple, indices, distance_metrics, quality_metrics
  bool validate = false;
  bool check_fp16_range = false;  // with `mark all` only
  bool fail_fast = false;
  SimpleCompareOptions simple;
  IndicesCompareOptions indices;
  DistanceCompareOptions distance;
  QualityCompareOptions quality;
  /// Per option (its flag), the output names its "[name:]value" items name: checked against the
  /// outputs (or tensors) that exist once they are known.
  std::vector<std::pair<std::string, std::vector<std::string>>> named_outputs;

  /// The comparison function `func` names, with its options.
  CompareFunc compare_func() const;
};

/// Option group: bad numbers and names of error statistics throw kInvalidArgument naming the option.
class ComparatorCompareArgs : public options::Group<CompareSettings> {
 public:
  ComparatorCompareArgs();
};

/// One absolute and one relative tolerance, each a single number (not per output).
struct Tolerances {
  std::optional<double> atol;  ///< --atol; nullopt: the command's default applies.
  std::optional<double> rtol;  ///< --rtol; nullopt: the command's default applies.
};

/// --atol/--abs-tol and --rtol/--rel-tol (the Comparator's spellings) for a command that checks
/// one thing against one bound (debug build's check, the navigator's formats). A value that is
/// not a number, or is negative, throws kInvalidArgument naming the option.
class ToleranceArgs : public options::Group<Tolerances> {
 public:
  /// `applies_to` ends each help line ("Absolute tolerance of the check"); the default texts say
  /// what holds when an option is not given ("1e-5", "measured only").
  ToleranceArgs(const std::string& applies_to, const std::string& atol_default, const std::string& rtol_default);
};

}  // namespace parity::compare
