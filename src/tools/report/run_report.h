// The report sections of `parity run`: per compared output, Polygraphy's statistics, histograms of
// the absolute and relative error, heatmaps of the error over the spatial axes, the verdicts
// ("run"); and for `--onnx-outputs mark all`, max/mean error per layer against the tolerance with
// the first divergence and the memory figures ("layerwise").
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "compare/comparator.h"
#include "compare/layerwise.h"
#include "compare/mark_all.h"
#include "core/run_results.h"
#include "tools/report/report.h"

namespace parity::tools::report {

struct RunReportOptions {
  /// Tolerances shown with the errors (the comparison's own; per output name).
  compare::SimpleCompareOptions tolerances;
  /// One heatmap per channel (axis -3) instead of one over all channels.
  bool per_channel = false;
  /// Heatmaps are max-pooled down to at most this many cells per side.
  int64_t heatmap_side = 64;
  /// At most this many channel heatmaps per output.
  int64_t max_channels = 16;
};

/// The "run" section. `comparisons` are the runner pairs compared (indices into results.runs) and
/// `accuracy` their verdicts (same order; may be null when nothing was compared); `passed` is the
/// command's verdict. Outputs of runs that were not compared are summarized by their statistics.
Json run_section(const RunResults& results, const std::vector<std::pair<size_t, size_t>>& comparisons,
                 const compare::AccuracyResult* accuracy, bool passed, const RunReportOptions& options);

/// One layer-by-layer comparison of `mark all`: a feed against a peer runner or a stored golden run.
using LayerwiseComparison = compare::LayerwiseComparison;

/// The "layerwise" section: one entry per comparison of `mark all` (per feed, and per stored run
/// with --load-outputs), each with its first divergence and where the divergence starts: that
/// node's inputs' errors against its output's (compare::find_divergence_start).
Json layerwise_section(const std::vector<LayerwiseComparison>& comparisons,
                       const compare::SimpleCompareOptions& tolerances);
/// The same, one comparison per iteration in order.
Json layerwise_section(const std::vector<compare::LayerwiseReport>& iterations,
                       const compare::SimpleCompareOptions& tolerances);

/// Histogram of error values for a report: log-spaced bins (whole decades) when the values span
/// more than one, exact zeros and NaN/inf counted apart.
Json error_histogram(const Tensor& errors);
/// Max-pooled heatmaps of `errors` over its last two axes (rank 2-4): one over everything, or one
/// per channel (axis -3) with `per_channel`.
Json error_heatmaps(const Tensor& errors, bool per_channel, int64_t side, int64_t max_channels);

}  // namespace parity::tools::report
