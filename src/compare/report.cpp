#include "compare/report.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "compare/compare_func.h"
#include "core/formats/array_print.h"
#include "core/stats.h"

namespace parity::compare {

namespace {
thread_local int g_indent_level = 0;
}

LogIndent::LogIndent() { ++g_indent_level; }
LogIndent::~LogIndent() { --g_indent_level; }
int LogIndent::level() { return g_indent_level; }

void report(Severity severity, const std::string& message) {
  if (!logger().enabled(severity)) return;
  const std::string pad(static_cast<size_t>(4 * g_indent_level), ' ');
  std::string text = pad;
  for (char c : message) {
    text += c;
    if (c == '\n') text += pad;
  }
  logger().log(severity, text);
}


std::string format_g(double value, int precision) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return fmt::format("{:.{}g}", value, precision);
}

std::string python_float_repr(double value) {
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e16) return fmt::format("{:.1f}", value);
  std::string text;
  for (int digits = 1; digits <= 17; ++digits) {
    text = fmt::format("{:.{}g}", value, digits);
    if (std::strtod(text.c_str(), nullptr) == value) break;
  }
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return text;
}

std::string runner_column(const std::string& name) { return fmt::format("{:<35}", name); }

void log_output_stats(const Tensor& tensor, bool show_details, const std::string& label,
                      std::optional<std::pair<double, double>> hist_range) {
  report(Severity::kInfo, (label.empty() ? std::string() : label + " | Stats: ") + stats_string(tensor));
  // Values (small outputs) and the histogram: shown on failure, verbose otherwise.
  const Severity severity = show_details ? Severity::kInfo : Severity::kVerbose;
  if (!logger().enabled(severity)) return;
  LogIndent indent;
  constexpr int64_t kSmallOutput = 100;
  if (tensor.numel() <= kSmallOutput) {
    std::string values = "---- Values ----\n    ";
    for (char c : array_to_string(tensor)) {
      values += c;
      if (c == '\n') values += "    ";
    }
    report(severity, values);
  }
  const std::string histogram = format_histogram(tensor, hist_range);
  if (!histogram.empty()) report(severity, histogram);
}

}  // namespace parity::compare
