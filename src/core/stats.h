// Tensor statistics and histograms computed the way numpy computes them for Polygraphy
// (same dtype promotion, pairwise summation in 8192-element blocks, 'linear' quantiles), so the
// figures parity prints are the ones Polygraphy prints for the same data.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace parity {

/// Polygraphy's per-tensor summary (comparator/util.py str_output_stats).
struct TensorStats {
  int64_t count = 0;
  double mean = 0;           // np.mean(x, dtype=float32)
  double std_dev = 0;        // population std (ddof=0)
  double var = 0;
  double median = 0;         // average of the two middle values for even counts
  double min = 0;
  double max = 0;
  Shape argmin;              // index of the first minimum (NaN counts as the minimum)
  Shape argmax;
  double avg_magnitude = 0;  // np.mean(|x|, dtype=float32)
  bool has_quantiles = true;  // numpy cannot take quantiles of bool tensors
  double p90 = 0, p95 = 0, p99 = 0;
};

/// Computes the statistics of a numeric (or bool) tensor. Throws kUnsupported for strings and
/// complex numbers. An empty tensor gives Polygraphy's figures (mean nan, min/max 0, p* inf).
TensorStats compute_stats(const Tensor& tensor);

/// "mean=0.47773, std-dev=0.30648, var=..., median=..., min=... at (0, 1, 2, 3), max=... at
/// (...), avg-magnitude=..., p90=..., p95=..., p99=..." with 5 significant digits.
std::string format_stats(const TensorStats& stats);
/// format_stats(compute_stats(tensor)), or "<Error while computing statistics>" when the dtype
/// has no statistics (as Polygraphy prints).
std::string stats_string(const Tensor& tensor);

/// numpy.quantile(x, q) with the default 'linear' method (numeric, non-bool tensors).
double quantile(const Tensor& tensor, double q);

/// numpy.histogram(x, bins=10[, range]).
struct Histogram {
  std::vector<int64_t> counts;  // 10 bins
  std::vector<double> edges;    // 11 edges, in the bin dtype (float32 data -> float32 edges)
};
/// Nothing for bool tensors and data with NaN/inf (numpy refuses those).
std::optional<Histogram> compute_histogram(const Tensor& tensor,
                                           std::optional<std::pair<double, double>> range = {});
/// Polygraphy's text histogram ("---- Histogram ----", bin ranges, counts, '#' bars), one line
/// per bin without a trailing newline; "" when there is none; "None" for empty tensors (what
/// Polygraphy prints there).
std::string format_histogram(const Tensor& tensor,
                             std::optional<std::pair<double, double>> range = {});

/// numpy's pairwise summation in float32 (the inner loop of np.add.reduce over one contiguous
/// block): what np.sum and np.mean(dtype=float32) add a float32 array with.
float numpy_pairwise_sum(const float* values, size_t n);

/// Python's format(value, '.{precision}g') ("nan", "inf", "1e-05", "0.47773").
std::string format_g(double value, int precision);

}  // namespace parity
