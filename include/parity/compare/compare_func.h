// Compare functions: how two runners' outputs of one iteration are judged (Polygraphy's
// CompareFunc). simple() reproduces CompareFunc.simple's pass/fail semantics exactly; indices()
// compares top-k style index outputs; distance_metrics() and quality_metrics() use L2 / cosine
// similarity and PSNR / SNR.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compare/per_output.h"
#include "core/run_results.h"
#include "core/tensor.h"

namespace parity::compare {

/// Which error statistic CompareFunc::simple checks against the tolerances. The first five are
/// Polygraphy's; the norm statistics are trtexec's (d = out0 - out1, ref = out1):
///   l1 / l2 / linf: fail when norm(d) > atol AND norm(d) / norm(ref) > rtol;
///   l0: fraction of elements with |d| > atol + rtol*|ref|; fails when it exceeds 1 - error_quantile;
///   cosine: fails when the cosine distance 1 - cos(out0, out1) > atol (rtol unused).
enum class ErrorStat { kElemwise, kMax, kMean, kMedian, kQuantile, kL0, kL1, kL2, kLinf, kCosine };
/** \var ErrorStat::kElemwise
    Every element against atol and rtol (Polygraphy's default). */
/** \var ErrorStat::kMax
    The largest absolute and relative differences. */
/** \var ErrorStat::kMean
    The mean absolute and relative differences. */
/** \var ErrorStat::kMedian
    The median absolute and relative differences. */
/** \var ErrorStat::kQuantile
    The absolute and relative differences at error_quantile. */
/** \var ErrorStat::kL0
    Fraction of elements outside atol + rtol*|ref| (trtexec). */
/** \var ErrorStat::kL1
    L1 norm of the difference (trtexec). */
/** \var ErrorStat::kL2
    L2 norm of the difference (trtexec). */
/** \var ErrorStat::kLinf
    Largest absolute difference as a norm (trtexec). */
/** \var ErrorStat::kCosine
    Cosine distance 1 - cos(out0, out1). */
/// Lower-case name of the statistic, as error_stat_from_name() parses it.
const char* error_stat_name(ErrorStat stat);
/// Parses "elemwise", "max", "mean", "median", "quantile", "l0", "l1", "l2", "linf", "cosine".
std::optional<ErrorStat> error_stat_from_name(const std::string& name);

/// Outcome of comparing one output in one iteration, with the statistics gathered.
struct OutputCompareResult {
  bool passed = false;  ///< True when the output matched.
  // simple(): error statistics (quantile ones only when the quantile stat was checked).
  /// Largest absolute difference.
  double max_absdiff = 0, max_reldiff = 0;
  /** \var OutputCompareResult::max_reldiff
      Largest relative difference. */
  /// Mean absolute difference.
  double mean_absdiff = 0, mean_reldiff = 0;
  /** \var OutputCompareResult::mean_reldiff
      Mean relative difference. */
  /// Median absolute difference.
  double median_absdiff = 0, median_reldiff = 0;
  /** \var OutputCompareResult::median_reldiff
      Median relative difference. */
  /// Absolute difference at error_quantile, when the quantile statistic was checked.
  std::optional<double> quantile_absdiff, quantile_reldiff;
  /** \var OutputCompareResult::quantile_reldiff
      Relative difference at error_quantile, when the quantile statistic was checked. */
  // distance_metrics() / quality_metrics().
  /// L2 norm of the difference (distance_metrics()).
  std::optional<double> l2_norm, cosine_similarity, psnr, snr;
  /** \var OutputCompareResult::cosine_similarity
      Cosine similarity of the outputs (distance_metrics()). */
  /** \var OutputCompareResult::psnr
      Peak signal-to-noise ratio in dB (quality_metrics()). */
  /** \var OutputCompareResult::snr
      Signal-to-noise ratio in dB (quality_metrics()). */

  explicit operator bool() const { return passed; }  ///< Same as passed.
  /// The tolerances that would make this output pass: "(atol=..., rtol=...)".
  std::string to_string() const;
};

/// Per-output results of one iteration, in the first runner's output order.
using IterationMatch = std::vector<std::pair<std::string, OutputCompareResult>>;

/// The output of `names1` that corresponds to `name` of `names0` (Polygraphy's
/// find_str_in_iterable without its index fallback): the same name, else the single name of
/// `names1` that contains `name` or is contained in it, case-insensitively ("y" and "y:0"), and has no
/// exact twin in `names0`. nullopt when there is none or more than one such name.
std::optional<std::string> match_output_name(const std::string& name, const std::vector<std::string>& names0,
                                             const std::vector<std::string>& names1);

/// Compares two iteration results; the first is iterated, the second searched for matches.
using CompareFunc = std::function<IterationMatch(const IterationResult&, const IterationResult&)>;

/// Tolerances of the simple compare function: atol, rtol and the error statistic they apply to.
struct SimpleCompareOptions {
  /// Shapes must match exactly; otherwise outputs with equal element counts are compared flat.
  bool check_shapes = true;
  PerOutput<double> rtol = 1e-5;  ///< Relative tolerance (per output).
  PerOutput<double> atol = 1e-5;  ///< Absolute tolerance (per output).
  PerOutput<ErrorStat> check_error_stat = ErrorStat::kElemwise;  ///< The statistic atol and rtol apply to (per output).
  PerOutput<double> error_quantile = 0.99;  ///< Quantile of the kQuantile statistic and 1 - allowed fraction of kL0 (per output).
  /// Matching +-inf values have an absolute difference of 0 instead of NaN.
  bool infinities_compare_equal = false;
  bool fail_fast = false;  ///< Stop comparing at the first output that fails.
};

/// Options of the indices compare function (for top-K style integer outputs).
struct IndicesCompareOptions {
  /// How many positions a value may move before it counts as a mismatch; the last
  /// `index_tolerance` values of each row are ignored (compare top-(k + tol) to compensate).
  PerOutput<int64_t> index_tolerance = 0;
  bool fail_fast = false;  ///< Stop comparing at the first output that fails.
};

/// Options of the distance_metrics compare function (L2 norm, cosine similarity thresholds).
struct DistanceCompareOptions {
  bool check_shapes = true;  ///< Shapes must match exactly; otherwise outputs with equal element counts are compared flat.
  PerOutput<double> l2_tolerance = 1e-5;  ///< Largest L2 norm of the difference that passes (per output).
  PerOutput<double> cosine_similarity_threshold = 0.997;  ///< Smallest cosine similarity that passes (per output).
  bool fail_fast = false;  ///< Stop comparing at the first output that fails.
};

/// Options of the quality_metrics compare function (PSNR and SNR thresholds).
struct QualityCompareOptions {
  bool check_shapes = true;  ///< Shapes must match exactly; otherwise outputs with equal element counts are compared flat.
  PerOutput<double> psnr_tolerance = 30.0;  ///< dB, minimum
  PerOutput<double> snr_tolerance = 20.0;   ///< dB, minimum
  bool fail_fast = false;  ///< Stop comparing at the first output that fails.
};

namespace compare_funcs {
/// Polygraphy's CompareFunc.simple: absolute/relative error against atol/rtol.
CompareFunc simple(SimpleCompareOptions options = {});
/// Polygraphy's CompareFunc.indices.
CompareFunc indices(IndicesCompareOptions options = {});
/// L2 norm of the difference <= l2_tolerance and cosine similarity >= threshold.
CompareFunc distance_metrics(DistanceCompareOptions options = {});
/// PSNR >= psnr_tolerance and SNR >= snr_tolerance (in dB).
CompareFunc quality_metrics(QualityCompareOptions options = {});
}  // namespace compare_funcs

/// Error statistics of out0 vs out1 with simple()'s exact numeric semantics (numpy dtype
/// promotion, epsilon for zeros in out1, float32 accumulation of means), without any logging.
struct ErrorStatistics {
  Tensor absdiff;  ///< |out0 - out1| in numpy's promoted dtype (XOR for two bool outputs)
  Tensor reldiff;  ///< absdiff / |out1|
  /// Largest element of absdiff.
  double max_absdiff = 0, max_reldiff = 0;
  /** \var ErrorStatistics::max_reldiff
      Largest element of reldiff. */
  /// Mean of absdiff (float32 accumulation).
  double mean_absdiff = 0, mean_reldiff = 0;
  /** \var ErrorStatistics::mean_reldiff
      Mean of reldiff (float32 accumulation). */
  /// Median of absdiff.
  double median_absdiff = 0, median_reldiff = 0;
  /** \var ErrorStatistics::median_reldiff
      Median of reldiff. */
  bool elementwise_mismatch = false;  ///< any element exceeding both tolerances (or NaN)
  // trtexec-style norms of d = out0 - out1 (float64), absolute and relative to the same norm of out1.
  double l0_fraction = 0;  ///< fraction of elements with |d| > atol + rtol*|out1| (NaN counts as outside)
  /// L1 norm of d.
  double l1 = 0, l1_rel = 0, l2 = 0, l2_rel = 0, linf = 0, linf_rel = 0;
  /** \var ErrorStatistics::l1_rel
      l1 divided by the L1 norm of out1. */
  /** \var ErrorStatistics::l2
      L2 norm of d. */
  /** \var ErrorStatistics::l2_rel
      l2 divided by the L2 norm of out1. */
  /** \var ErrorStatistics::linf
      Largest |d|. */
  /** \var ErrorStatistics::linf_rel
      linf divided by the largest |out1|. */
  double cosine_distance = 0;  ///< 1 - cos(out0, out1); 0 when both are all zero, 1 when only one is
};
/// Computes the statistics of out0 against out1; elementwise_mismatch uses atol and rtol.
ErrorStatistics compute_error_statistics(const Tensor& out0, const Tensor& out1, double atol,
                                         double rtol, bool infinities_compare_equal);

/// Whether simple() fails for these statistics (quantile stats computed on demand).
bool simple_check_failed(const ErrorStatistics& stats, ErrorStat stat, double atol, double rtol,
                         double quantile, std::optional<double>* quantile_abs,
                         std::optional<double>* quantile_rel);

/// Numeric helpers with numpy's semantics (NaN propagates; empty arrays give 0).
namespace numpy_stats {
double max(const Tensor& t);  ///< Largest element (NaN when any is NaN; 0 when empty).
double min(const Tensor& t);  ///< Smallest element (NaN when any is NaN; 0 when empty).
/// np.mean(t, dtype=float32): pairwise float32 summation, as Polygraphy computes means.
double mean_f32(const Tensor& t);
double median(const Tensor& t);  ///< np.median(t).
/// np.quantile(t, q) with linear interpolation.
double quantile(const Tensor& t, double q);
}  // namespace numpy_stats

/// numpy's type promotion after Polygraphy's cast_up (fp16 -> fp32, small ints -> int32,
/// uint32 -> int64): the dtype |out0 - out1| is computed in.
DType comparison_dtype(DType a, DType b);
/// Polygraphy's cast_up.
Tensor cast_up(const Tensor& t);

}  // namespace parity::compare
