// The report section of `parity test onnx-backend`: pass/fail/error/skip per operator family (the
// folder of ONNX's operator definitions: math, nn, tensor, ...) and every test's result.
#pragma once

#include <string>
#include <vector>

#include "tools/report/report.h"

namespace parity::tools::report {

/// One conformance test's result.
struct ConformanceCase {
  std::string id;       // "<kind>/<test>"
  std::string outcome;  // "pass", "fail", "error", "skipped"
  std::string op_type;  // the operator under test ("" when unknown)
  std::string family;   // its family ("other" when unknown)
  std::string message;
  double max_abs_error = 0;
  double seconds = 0;
};

/// The operator family of `op_type` in `domain`: the folder of ONNX's definitions that declares
/// its schema (onnx/defs/<family>/defs.cc), "other" when ONNX does not know it.
std::string operator_family(const std::string& op_type, const std::string& domain = "");

/// The "conformance" section.
Json conformance_section(const std::string& runner, const std::vector<ConformanceCase>& cases);

}  // namespace parity::tools::report
