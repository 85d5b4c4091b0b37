// The "Report" option group: --report FILE.html|FILE.json (and, where outputs have spatial axes,
// --report-per-channel). Commands add it and read it once before running, so a bad file name fails
// before any work.
#pragma once

#include <optional>
#include <string>

#include "options/group.h"

namespace parity::tools::report {

struct ReportOptions {
  std::optional<std::string> path;  // --report
  bool per_channel = false;         // --report-per-channel
};

/// parse() reads the options and checks the report's file name and folder.
class ReportArgs : public options::Group<ReportOptions> {
 public:
  /// `what` completes the help line ("per output: statistics, error histograms and heatmaps").
  explicit ReportArgs(std::string what, bool per_channel_option = false);
};

}  // namespace parity::tools::report
