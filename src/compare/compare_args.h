// The comparison options (Polygraphy's ComparatorCompareArgs): --validate, --fail-fast, --compare
// and each comparison function's tolerances, "[name:]value" per output. It lives in compare/
// because its parsed value is the compare layer's option structs and CompareFunc.
#pragma once

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

}  // namespace parity::compare
