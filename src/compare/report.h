// Polygraphy-style report output for the comparator: indented log blocks, Python-style shapes,
// and per-output statistics lines with histograms.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "core/logger.h"
#include "core/tensor.h"

namespace parity::compare {

/// Indents comparator log messages by one level (4 spaces) while alive, like G_LOGGER.indent().
class LogIndent {
 public:
  LogIndent();
  ~LogIndent();
  LogIndent(const LogIndent&) = delete;
  LogIndent& operator=(const LogIndent&) = delete;
  static int level();
};

/// Logs `message` at the current indentation (every line of it).
void report(Severity severity, const std::string& message);
template <typename... Args>
void report_cat(Severity severity, const Args&... args) {
  if (logger().enabled(severity)) report(severity, str_cat(args...));
}

/// Python's format(x, '.5g') (and friends): "1e-05", "0.00010005", "nan", "inf".
std::string format_g(double value, int precision = 5);

/// Python's str(float): the shortest text that reads back as `value`, positional below 1e16 and
/// always with a '.' or exponent ("100.0", "33.33333333333333", "1e-05", "nan").
std::string python_float_repr(double value);

/// A runner's name in Polygraphy's 35-column field that starts its log lines.
std::string runner_column(const std::string& name);

/// Logs "<label> | Stats: mean=..., ..." for a tensor and, at info level when `show_details`
/// (on failure) or verbose otherwise, its values (small tensors) and a 10-bin histogram over
/// `hist_range`.
void log_output_stats(const Tensor& tensor, bool show_details, const std::string& label,
                      std::optional<std::pair<double, double>> hist_range = std::nullopt);

}  // namespace parity::compare
