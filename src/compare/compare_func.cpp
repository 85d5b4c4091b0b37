#include "compare/compare_func.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <set>

#include "compare/report.h"
#include "core/low_precision.h"
#include "core/logger.h"
#include "core/metadata.h"
#include "core/stats.h"

namespace parity::compare {

// ---------------------------------------------------------------------------------------------
// dtype handling

namespace {
DType cast_up_dtype(DType d);
}  // namespace

Tensor cast_up(const Tensor& t) {
  if (is_low_precision(t.dtype())) return t.cast(cast_up_dtype(t.dtype()));
  switch (t.dtype()) {
    case DType::kFloat16:
    case DType::kBFloat16:
      return t.cast(DType::kFloat32);
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kInt16:
    case DType::kUInt16:
      return t.cast(DType::kInt32);
    case DType::kUInt32:
      return t.cast(DType::kInt64);
    default:
      return t;
  }
}

namespace {

DType cast_up_dtype(DType d) {
  // float8/float4 values compare as float32, int4/uint4/int2/uint2 as int32.
  if (is_low_precision(d))
    return is_low_precision_integer(d) ? DType::kInt32 : DType::kFloat32;
  switch (d) {
    case DType::kFloat16:
    case DType::kBFloat16:
      return DType::kFloat32;
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kInt16:
    case DType::kUInt16:
      return DType::kInt32;
    case DType::kUInt32:
      return DType::kInt64;
    default:
      return d;
  }
}

void check_comparable(DType d) {
  PARITY_CHECK(d != DType::kString && !is_complex(d) && d != DType::kUndefined, kUnsupported,
               "cannot compare outputs of dtype ", dtype_name(d));
}

}  // namespace

DType comparison_dtype(DType a_in, DType b_in) {
  check_comparable(a_in);
  check_comparable(b_in);
  const DType a = cast_up_dtype(a_in), b = cast_up_dtype(b_in);
  if (a == b) return a;
  if (a == DType::kFloat64 || b == DType::kFloat64) return DType::kFloat64;
  const bool a_f32 = a == DType::kFloat32, b_f32 = b == DType::kFloat32;
  if (a_f32 || b_f32) {
    const DType other = a_f32 ? b : a;
    return other == DType::kBool ? DType::kFloat32 : DType::kFloat64;
  }
  if (a == DType::kBool) return b;
  if (b == DType::kBool) return a;
  const bool a_u64 = a == DType::kUInt64, b_u64 = b == DType::kUInt64;
  if (a_u64 || b_u64) return DType::kFloat64;  // uint64 with a signed integer
  return DType::kInt64;                        // int32 with int64
}

// ---------------------------------------------------------------------------------------------
// numpy statistics

namespace numpy_stats {
namespace {

std::vector<double> as_doubles(const Tensor& t) {
  const Tensor d = t.dtype() == DType::kFloat64 ? t : t.cast(DType::kFloat64);
  auto v = d.values<double>();
  return std::vector<double>(v.begin(), v.end());
}

bool any_nan(const std::vector<double>& v) {
  return std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); });
}

}  // namespace

double max(const Tensor& t) {
  if (t.numel() == 0) return 0;
  auto v = as_doubles(t);
  double m = v[0];
  for (double x : v) {
    if (std::isnan(x)) return x;
    m = std::max(m, x);
  }
  return m;
}

double min(const Tensor& t) {
  if (t.numel() == 0) return 0;
  auto v = as_doubles(t);
  double m = v[0];
  for (double x : v) {
    if (std::isnan(x)) return x;
    m = std::min(m, x);
  }
  return m;
}

double mean_f32(const Tensor& t) {
  const int64_t n = t.numel();
  if (n == 0) return std::numeric_limits<double>::quiet_NaN();
  float sum = 0.0f;
  if (t.dtype() == DType::kFloat32) {
    sum += numpy_pairwise_sum(t.data<float>(), static_cast<size_t>(n));
  } else {
    // A cast is needed, so numpy reduces through its 8192-element buffers one after another.
    const Tensor f = t.cast(DType::kFloat32);
    const float* p = f.data<float>();
    constexpr int64_t kBuffer = 8192;
    for (int64_t start = 0; start < n; start += kBuffer)
      sum += numpy_pairwise_sum(p + start, static_cast<size_t>(std::min(kBuffer, n - start)));
  }
  return static_cast<double>(sum / static_cast<float>(n));
}

double median(const Tensor& t) {
  const int64_t n = t.numel();
  if (n == 0) return 0;
  auto v = as_doubles(t);
  if (any_nan(v)) return std::numeric_limits<double>::quiet_NaN();
  const size_t mid = static_cast<size_t>(n / 2);
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  const double upper = v[mid];
  if (n % 2 == 1) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + mid);
  if (t.dtype() == DType::kFloat32) return static_cast<double>((0.0f + static_cast<float>(lower) + static_cast<float>(upper)) / 2.0f);
  return (lower + upper) / 2.0;
}

double quantile(const Tensor& t, double q) {
  const int64_t n = t.numel();
  if (n == 0) return 0;
  auto v = as_doubles(t);
  if (any_nan(v)) return std::numeric_limits<double>::quiet_NaN();
  const double virtual_index = q * static_cast<double>(n - 1);
  int64_t below = static_cast<int64_t>(std::floor(virtual_index));
  int64_t above = below + 1;
  if (virtual_index >= static_cast<double>(n - 1)) below = above = n - 1;
  if (virtual_index < 0) below = above = 0;
  std::sort(v.begin(), v.end());
  const double a = v[below], b = v[above];
  const double gamma = virtual_index - std::floor(virtual_index);
  // numpy subtracts in the array's dtype, then interpolates in float64.
  const double diff = t.dtype() == DType::kFloat32 ? static_cast<double>(static_cast<float>(b) - static_cast<float>(a)) : b - a;
  return gamma >= 0.5 ? b - diff * (1.0 - gamma) : a + diff * gamma;
}

}  // namespace numpy_stats

// ---------------------------------------------------------------------------------------------
// error statistics

namespace {

template <typename T>
Tensor integer_absdiff(const Tensor& a, const Tensor& b) {
  using U = std::make_unsigned_t<T>;
  const Tensor ac = a.dtype() == dtype_of_v<T> ? a : a.cast(dtype_of_v<T>);
  const Tensor bc = b.dtype() == dtype_of_v<T> ? b : b.cast(dtype_of_v<T>);
  Tensor out(dtype_of_v<T>, a.shape());
  const T* pa = ac.template data<T>();
  const T* pb = bc.template data<T>();
  T* po = out.template data<T>();
  for (int64_t i = 0; i < out.numel(); ++i) {
    // numpy integer arithmetic wraps around.
    const T diff = static_cast<T>(static_cast<U>(pa[i]) - static_cast<U>(pb[i]));
    if constexpr (std::is_signed_v<T>)
      po[i] = diff < 0 ? static_cast<T>(U(0) - static_cast<U>(diff)) : diff;
    else
      po[i] = diff;
  }
  return out;
}

template <typename F>
Tensor float_absdiff(const Tensor& a, const Tensor& b) {
  const Tensor ac = a.dtype() == dtype_of_v<F> ? a : a.cast(dtype_of_v<F>);
  const Tensor bc = b.dtype() == dtype_of_v<F> ? b : b.cast(dtype_of_v<F>);
  Tensor out(dtype_of_v<F>, a.shape());
  const F* pa = ac.template data<F>();
  const F* pb = bc.template data<F>();
  F* po = out.template data<F>();
  for (int64_t i = 0; i < out.numel(); ++i) po[i] = std::fabs(pa[i] - pb[i]);
  return out;
}

// |x| in x's (cast-up) dtype, as doubles; zeros of floating outputs become epsilon first.
std::vector<double> reference_magnitudes(const Tensor& out1_up) {
  constexpr double kEpsilon = 2.220446049250313e-16;
  const int64_t n = out1_up.numel();
  std::vector<double> mags(static_cast<size_t>(n));
  switch (out1_up.dtype()) {
    case DType::kFloat32: {
      const float* p = out1_up.data<float>();
      const float eps = static_cast<float>(kEpsilon);
      for (int64_t i = 0; i < n; ++i) mags[i] = std::fabs(p[i] == 0.0f ? p[i] + eps : p[i]);
      break;
    }
    case DType::kFloat64: {
      const double* p = out1_up.data<double>();
      for (int64_t i = 0; i < n; ++i) mags[i] = std::fabs(p[i] == 0.0 ? p[i] + kEpsilon : p[i]);
      break;
    }
    case DType::kInt32: {
      const int32_t* p = out1_up.data<int32_t>();
      for (int64_t i = 0; i < n; ++i) mags[i] = std::fabs(static_cast<double>(p[i]));
      break;
    }
    case DType::kInt64: {
      const int64_t* p = out1_up.data<int64_t>();
      for (int64_t i = 0; i < n; ++i) mags[i] = std::fabs(static_cast<double>(p[i]));
      break;
    }
    default: {
      const Tensor d = out1_up.cast(DType::kFloat64);
      const double* p = d.data<double>();
      for (int64_t i = 0; i < n; ++i) mags[i] = std::fabs(p[i]);
    }
  }
  return mags;
}

struct Stat {
  double value = 0;
  bool is_f32 = false;  // numpy float32 scalars compare with tolerances in float32
};

bool stat_failed(Stat s, double tol) {
  if (std::isnan(s.value)) return true;
  if (s.is_f32) return static_cast<float>(s.value) > static_cast<float>(tol);
  return s.value > tol;
}

}  // namespace

namespace {

// Ratio of a norm of the difference to the same norm of the reference; 0/0 is 0, x/0 is inf.
double relative_norm(double diff, double ref) {
  if (std::isnan(diff) || std::isnan(ref)) return std::numeric_limits<double>::quiet_NaN();
  if (ref == 0) return diff == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return diff / ref;
}

// Fills the trtexec-style statistics (l0/l1/l2/linf and cosine distance) in float64. `absdiff`
// holds |out0 - out1| (already honouring --infinities-compare-equal).
void compute_norm_statistics(const Tensor& out0, const Tensor& out1, const double* absdiff, double atol, double rtol,
                             ErrorStatistics& s) {
  const int64_t n = out0.numel();
  double l1 = 0, l2 = 0, linf = 0, ref_l1 = 0, ref_l2 = 0, ref_linf = 0;
  double dot = 0, norm0 = 0;
  int64_t outside = 0;
  bool nan = false;
  for (int64_t i = 0; i < n; ++i) {
    const double x0 = out0.value_as_double(i), x1 = out1.value_as_double(i), d = absdiff[i];
    const double ref = std::abs(x1);
    if (std::isnan(d)) nan = true;
    if (std::isnan(d) || d > atol + rtol * ref) ++outside;
    l1 += d;
    l2 += d * d;
    linf = std::max(linf, d);
    ref_l1 += ref;
    ref_l2 += ref * ref;
    ref_linf = std::max(ref_linf, ref);
    dot += x0 * x1;
    norm0 += x0 * x0;
  }
  const double nan_v = std::numeric_limits<double>::quiet_NaN();
  s.l0_fraction = n == 0 ? 0.0 : static_cast<double>(outside) / static_cast<double>(n);
  s.l1 = nan ? nan_v : l1;
  s.l2 = nan ? nan_v : std::sqrt(l2);
  s.linf = nan ? nan_v : linf;
  s.l1_rel = relative_norm(s.l1, ref_l1);
  s.l2_rel = relative_norm(s.l2, std::sqrt(ref_l2));
  s.linf_rel = relative_norm(s.linf, ref_linf);
  if (norm0 == 0 && ref_l2 == 0) s.cosine_distance = 0;
  else if (norm0 == 0 || ref_l2 == 0) s.cosine_distance = 1;
  else s.cosine_distance = 1.0 - dot / (std::sqrt(norm0) * std::sqrt(ref_l2));
}

}  // namespace

ErrorStatistics compute_error_statistics(const Tensor& out0, const Tensor& out1, double atol,
                                         double rtol, bool infinities_compare_equal) {
  PARITY_ASSERT(out0.numel() == out1.numel(), "compared outputs differ in size");
  ErrorStatistics s;
  const Tensor a = cast_up(out0), b = cast_up(out1);
  const DType dtype = comparison_dtype(out0.dtype(), out1.dtype());
  if (out0.dtype() == DType::kBool && out1.dtype() == DType::kBool) {
    Tensor x(DType::kBool, out0.shape());
    const bool* pa = out0.data<bool>();
    const bool* pb = out1.data<bool>();
    bool* px = x.data<bool>();
    for (int64_t i = 0; i < x.numel(); ++i) px[i] = pa[i] != pb[i];
    s.absdiff = x;
  } else {
    switch (dtype) {
      case DType::kFloat32: s.absdiff = float_absdiff<float>(a, b); break;
      case DType::kFloat64: s.absdiff = float_absdiff<double>(a, b); break;
      case DType::kInt32: s.absdiff = integer_absdiff<int32_t>(a, b); break;
      case DType::kInt64: s.absdiff = integer_absdiff<int64_t>(a, b); break;
      case DType::kUInt64: s.absdiff = integer_absdiff<uint64_t>(a, b); break;
      default: fail(ErrorCode::kUnsupported, "cannot compare outputs of dtypes ", dtype_name(out0.dtype()),
                    " and ", dtype_name(out1.dtype()));
    }
    if (infinities_compare_equal && is_floating(out0.dtype())) {
      for (int64_t i = 0; i < s.absdiff.numel(); ++i) {
        const double x0 = out0.value_as_double(i), x1 = out1.value_as_double(i);
        if (std::isinf(x0) && x0 == x1) {
          if (s.absdiff.dtype() == DType::kFloat32) s.absdiff.data<float>()[i] = 0.0f;
          else s.absdiff.data<double>()[i] = 0.0;
        }
      }
    }
  }

  // Relative difference: float32 only when both sides are float32, like numpy's true_divide.
  const bool rel_f32 = s.absdiff.dtype() == DType::kFloat32 && b.dtype() == DType::kFloat32;
  const std::vector<double> mags = reference_magnitudes(b);
  const int64_t n = s.absdiff.numel();
  s.reldiff = Tensor(rel_f32 ? DType::kFloat32 : DType::kFloat64, out0.shape());
  const Tensor abs_d = s.absdiff.cast(DType::kFloat64);
  const double* pabs = abs_d.data<double>();
  if (rel_f32) {
    float* pr = s.reldiff.data<float>();
    for (int64_t i = 0; i < n; ++i) pr[i] = static_cast<float>(pabs[i]) / static_cast<float>(mags[i]);
  } else {
    double* pr = s.reldiff.data<double>();
    for (int64_t i = 0; i < n; ++i) pr[i] = pabs[i] / mags[i];
  }

  s.max_absdiff = numpy_stats::max(s.absdiff);
  s.max_reldiff = numpy_stats::max(s.reldiff);
  s.mean_absdiff = numpy_stats::mean_f32(s.absdiff);
  s.mean_reldiff = numpy_stats::mean_f32(s.reldiff);
  s.median_absdiff = numpy_stats::median(s.absdiff);
  s.median_reldiff = numpy_stats::median(s.reldiff);
  if (n == 0) s.mean_absdiff = s.mean_reldiff = 0;  // Polygraphy reports 0 for empty outputs

  // Element-wise: fails where both the absolute and relative errors exceed (or are NaN).
  const bool abs_f32 = s.absdiff.dtype() == DType::kFloat32;
  const float atol_f = static_cast<float>(atol), rtol_f = static_cast<float>(rtol);
  const Tensor rel_d = s.reldiff.dtype() == DType::kFloat64 ? s.reldiff : s.reldiff.cast(DType::kFloat64);
  const double* prel = rel_d.data<double>();
  for (int64_t i = 0; i < n && !s.elementwise_mismatch; ++i) {
    const bool abs_bad = std::isnan(pabs[i]) || (abs_f32 ? static_cast<float>(pabs[i]) > atol_f : pabs[i] > atol);
    const bool rel_bad = std::isnan(prel[i]) || (rel_f32 ? static_cast<float>(prel[i]) > rtol_f : prel[i] > rtol);
    s.elementwise_mismatch = abs_bad && rel_bad;
  }
  compute_norm_statistics(out0, out1, pabs, atol, rtol, s);
  return s;
}

bool simple_check_failed(const ErrorStatistics& s, ErrorStat stat, double atol, double rtol,
                         double quantile, std::optional<double>* quantile_abs,
                         std::optional<double>* quantile_rel) {
  const bool abs_f32 = s.absdiff.dtype() == DType::kFloat32;
  const bool rel_f32 = s.reldiff.dtype() == DType::kFloat32;
  switch (stat) {
    case ErrorStat::kMean:
      return stat_failed({s.mean_absdiff, true}, atol) && stat_failed({s.mean_reldiff, true}, rtol);
    case ErrorStat::kMedian:
      return stat_failed({s.median_absdiff, abs_f32}, atol) && stat_failed({s.median_reldiff, rel_f32}, rtol);
    case ErrorStat::kMax:
      return stat_failed({s.max_absdiff, abs_f32}, atol) && stat_failed({s.max_reldiff, rel_f32}, rtol);
    case ErrorStat::kQuantile: {
      const double qa = numpy_stats::quantile(s.absdiff, quantile);
      const double qr = numpy_stats::quantile(s.reldiff, quantile);
      if (quantile_abs) *quantile_abs = qa;
      if (quantile_rel) *quantile_rel = qr;
      return stat_failed({qa, false}, atol) && stat_failed({qr, false}, rtol);
    }
    case ErrorStat::kElemwise:
      return s.elementwise_mismatch;
    case ErrorStat::kL0:
      return std::isnan(s.l0_fraction) || s.l0_fraction > 1.0 - quantile;
    case ErrorStat::kL1: return stat_failed({s.l1, false}, atol) && stat_failed({s.l1_rel, false}, rtol);
    case ErrorStat::kL2: return stat_failed({s.l2, false}, atol) && stat_failed({s.l2_rel, false}, rtol);
    case ErrorStat::kLinf: return stat_failed({s.linf, false}, atol) && stat_failed({s.linf_rel, false}, rtol);
    case ErrorStat::kCosine: return stat_failed({s.cosine_distance, false}, atol);
  }
  return true;
}

const char* error_stat_name(ErrorStat stat) {
  switch (stat) {
    case ErrorStat::kElemwise: return "elemwise";
    case ErrorStat::kMax: return "max";
    case ErrorStat::kMean: return "mean";
    case ErrorStat::kMedian: return "median";
    case ErrorStat::kQuantile: return "quantile";
    case ErrorStat::kL0: return "l0";
    case ErrorStat::kL1: return "l1";
    case ErrorStat::kL2: return "l2";
    case ErrorStat::kLinf: return "linf";
    case ErrorStat::kCosine: return "cosine";
  }
  return "?";
}

std::optional<ErrorStat> error_stat_from_name(const std::string& name) {
  for (ErrorStat s : {ErrorStat::kElemwise, ErrorStat::kMax, ErrorStat::kMean, ErrorStat::kMedian, ErrorStat::kQuantile,
                      ErrorStat::kL0, ErrorStat::kL1, ErrorStat::kL2, ErrorStat::kLinf, ErrorStat::kCosine})
    if (name == error_stat_name(s)) return s;
  return std::nullopt;
}

std::string OutputCompareResult::to_string() const {
  return "(atol=" + format_g(max_absdiff, 17) + ", rtol=" + format_g(max_reldiff, 17) + ")";
}

// ---------------------------------------------------------------------------------------------
// iterating over outputs

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

std::optional<std::string> match_output_name(const std::string& name, const std::vector<std::string>& names0,
                                             const std::vector<std::string>& names1) {
  if (std::find(names1.begin(), names1.end(), name) != names1.end()) return name;
  const std::string ln = lower(name);
  std::optional<std::string> found;
  for (const auto& candidate : names1) {
    const std::string lc = lower(candidate);
    if (ln.find(lc) == std::string::npos && lc.find(ln) == std::string::npos) continue;
    if (std::find(names0.begin(), names0.end(), candidate) != names0.end()) continue;  // has its exact twin
    if (found) return std::nullopt;  // ambiguous: "y" against "y:0" and "y:1"
    found = candidate;
  }
  return found;
}

namespace {

// The output of `result1` to compare with `name` of `result0`, with a warning when the names
// differ (match_output_name).
std::optional<std::string> find_counterpart(const std::string& name, const IterationResult& result0,
                                            const IterationResult& result1) {
  auto match = match_output_name(name, result0.outputs.names(), result1.outputs.names());
  if (match && *match != name)
    logger().warning("Output names did not match exactly. Assuming ", result1.runner_name, " output: ", *match,
                     " corresponds to output: ", name);
  return match;
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string s = "[";
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", '" : "'") + names[i] + "'";
  return s + "]";
}

using MatchFn = std::function<OutputCompareResult(const std::string& name0, const Tensor& out0,
                                                  const std::string& name1, const Tensor& out1)>;

IterationMatch run_comparison(const MatchFn& match, bool fail_fast, const IterationResult& r0,
                              const IterationResult& r1) {
  IterationMatch statuses;
  std::vector<std::string> missing;
  for (const auto& [name0, out0_stored] : r0.outputs) {
    auto name1 = find_counterpart(name0, r0, r1);
    if (!name1) {
      missing.push_back(name0);
      continue;
    }
    // A stored output of an ml_dtypes 1-byte type reads back as '<V1': the live side names its type.
    const Tensor out1 = resolve_numpy_void(r1.outputs.at(*name1), out0_stored.dtype());
    const Tensor out0 = resolve_numpy_void(out0_stored, out1.dtype());
    report_cat(Severity::kStart, "Comparing Output: '", name0, "' (dtype=", dtype_name(out0.dtype()),
               ", shape=", shape_to_string(out0.shape()), ") with '", *name1, "' (dtype=", dtype_name(out1.dtype()),
               ", shape=", shape_to_string(out1.shape()), ")");
    OutputCompareResult result;
    {
      LogIndent indent;
      result = match(name0, out0, *name1, out1);
    }
    statuses.emplace_back(name0, result);
    if (fail_fast && !result.passed) return statuses;
  }
  // Outputs with no counterpart make the comparison meaningless: say what each side has.
  PARITY_CHECK(missing.empty(), kInvalidArgument, "output", missing.size() > 1 ? "s " : " ",
               join_names(missing), " of ", r0.runner_name, " ", missing.size() > 1 ? "have" : "has",
               " no counterpart in ", r1.runner_name, "; ", r0.runner_name, " outputs: ",
               join_names(r0.outputs.names()), "; ", r1.runner_name, " outputs: ",
               join_names(r1.outputs.names()));
  std::vector<std::string> mismatched, all;
  for (const auto& [name, res] : statuses) {
    all.push_back(name);
    if (!res.passed) mismatched.push_back(name);
  }
  if (!mismatched.empty()) report_cat(Severity::kError, "FAILED | Mismatched outputs: ", quoted_list(mismatched));
  else report_cat(Severity::kFinish, "PASSED | All outputs matched | Outputs: ", quoted_list(all));
  return statuses;
}

// Outputs of different shapes: an error unless shape checks are off and sizes agree.
std::optional<Tensor> align_shapes(const std::string& name, const Tensor& out0, const Tensor& out1,
                                   bool check_shapes) {
  if (out0.shape() == out1.shape()) return out1;
  if (!check_shapes && out0.numel() == out1.numel()) return out1.reshaped(out0.shape());
  report_cat(Severity::kError, "FAILED | Output: `", name, "` | Will not compare outputs of different shapes.\n",
             "Note: Output shapes are ", shape_to_string(out0.shape()), " and ", shape_to_string(out1.shape()), ".");
  if (check_shapes)
    report_cat(Severity::kError, "Note: Use --no-shape-check or set check_shapes=False to attempt to compare values anyway.");
  return std::nullopt;
}

bool has_zero(const Tensor& t) {
  for (int64_t i = 0; i < t.numel(); ++i)
    if (t.value_as_double(i) == 0.0) return true;
  return false;
}

// Polygraphy's LogMode.ONCE: a message is shown only the first time.
void log_once(Severity severity, const std::string& message) {
  static std::mutex mutex;
  static std::set<std::string> seen;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!seen.insert(message).second) return;
  }
  report(severity, message);
}

// The "Minimum Required Tolerance" line for the trtexec-style statistics; empty for Polygraphy's.
std::string norm_requirement(ErrorStat stat, const ErrorStatistics& s, double quantile) {
  auto pair = [&](double abs, double rel) {
    return str_cat("Minimum Required Tolerance: ", error_stat_name(stat), " norm of the difference | [abs=",
                   format_g(abs), "] OR [rel=", format_g(rel), "]");
  };
  switch (stat) {
    case ErrorStat::kL1: return pair(s.l1, s.l1_rel);
    case ErrorStat::kL2: return pair(s.l2, s.l2_rel);
    case ErrorStat::kLinf: return pair(s.linf, s.linf_rel);
    case ErrorStat::kCosine:
      return str_cat("Minimum Required Tolerance: cosine distance (1 - cos) | [abs=", format_g(s.cosine_distance), "]");
    case ErrorStat::kL0:
      return str_cat("Fraction of elements outside atol + rtol*|ref|: ", format_g(s.l0_fraction),
                     " (allowed: 1 - error_quantile = ", format_g(1.0 - quantile), ")");
    default: return "";
  }
}

std::pair<double, double> joint_range(const Tensor& a, const Tensor& b) {
  return {std::min(numpy_stats::min(a), numpy_stats::min(b)), std::max(numpy_stats::max(a), numpy_stats::max(b))};
}


}  // namespace

namespace compare_funcs {

CompareFunc simple(SimpleCompareOptions options) {
  return [options](const IterationResult& r0, const IterationResult& r1) {
    auto match = [&](const std::string& name0, const Tensor& out0, const std::string& name1,
                     const Tensor& out1_in) -> OutputCompareResult {
      const double atol = options.atol.get(name0);
      const double rtol = options.rtol.get(name0);
      const ErrorStat stat = options.check_error_stat.get(name0);
      const double q = options.error_quantile.get(name0);
      report_cat(Severity::kInfo, "Tolerance: [abs=", format_g(atol), ", rel=", format_g(rtol), "] | Checking ",
                 error_stat_name(stat), " error");
      OutputCompareResult result;
      auto out1 = align_shapes(name0, out0, out1_in, options.check_shapes);
      if (!out1) return result;

      if (is_floating(out1->dtype()) && has_zero(*out1))
        log_once(Severity::kWarning, str_cat(runner_column(r1.runner_name), " | Output: ", name1,
                                             ": Some values are 0. Will add a small epsilon quantity to these when "
                                             "computing relative difference. Note that this may cause some relative "
                                             "differences to be extremely high. "));
      const ErrorStatistics s = compute_error_statistics(out0, *out1, atol, rtol, options.infinities_compare_equal);
      const bool failed = simple_check_failed(s, stat, atol, rtol, q, &result.quantile_absdiff, &result.quantile_reldiff);
      const auto range = joint_range(out0, *out1);
      log_output_stats(out0, failed, r0.runner_name + ": " + name0, range);
      log_output_stats(*out1, failed, r1.runner_name + ": " + name1, range);

      report_cat(Severity::kInfo, "Error Metrics: ", name0);
      {
        LogIndent indent;
        auto req = [&](double mean, double median, double max, std::optional<double> quant) {
          switch (stat) {
            case ErrorStat::kMean: return mean;
            case ErrorStat::kMedian: return median;
            case ErrorStat::kQuantile: return quant.value_or(0.0);
            default: return max;
          }
        };
        std::string msg = norm_requirement(stat, s, q);
        if (msg.empty())
          msg = str_cat("Minimum Required Tolerance: ", error_stat_name(stat), " error | [abs=",
                        format_g(req(s.mean_absdiff, s.median_absdiff, s.max_absdiff, result.quantile_absdiff)),
                        "] OR [rel=",
                        format_g(req(s.mean_reldiff, s.median_reldiff, s.max_reldiff, result.quantile_reldiff)), "]");
        if (stat == ErrorStat::kElemwise) msg += " (requirements may be lower if both abs/rel tolerances are set)";
        if (stat == ErrorStat::kQuantile) msg += " (quantile=" + format_g(q, 4) + ")";
        report(Severity::kInfo, msg);
        log_output_stats(s.absdiff, failed, "Absolute Difference");
        log_output_stats(s.reldiff, failed, "Relative Difference");
      }
      result.passed = !failed;
      result.max_absdiff = s.max_absdiff;
      result.max_reldiff = s.max_reldiff;
      result.mean_absdiff = s.mean_absdiff;
      result.mean_reldiff = s.mean_reldiff;
      result.median_absdiff = s.median_absdiff;
      result.median_reldiff = s.median_reldiff;
      if (failed)
        report_cat(Severity::kError, "FAILED | Output: '", name0, "' | Difference exceeds tolerance (rel=",
                   python_float_repr(rtol), ", abs=", python_float_repr(atol), ")");
      else
        report_cat(Severity::kFinish, "PASSED | Output: '", name0, "' | Difference is within tolerance (rel=",
                   python_float_repr(rtol), ", abs=", python_float_repr(atol), ")");
      return result;
    };
    return run_comparison(match, options.fail_fast, r0, r1);
  };
}

CompareFunc indices(IndicesCompareOptions options) {
  return [options](const IterationResult& r0, const IterationResult& r1) {
    auto match = [&](const std::string& name0, const Tensor& out0, const std::string& name1,
                     const Tensor& out1) -> OutputCompareResult {
      const int64_t tol = options.index_tolerance.get(name0);
      OutputCompareResult result;
      if (out0.shape() != out1.shape()) {
        report(Severity::kError, "Cannot compare outputs of different shapes.");
        return result;
      }
      const int64_t row = out0.rank() == 0 ? 1 : out0.shape().back();
      const int64_t rows = row == 0 ? 0 : out0.numel() / row;
      const Tensor a = out0.cast(DType::kFloat64), b = out1.cast(DType::kFloat64);
      const double* pa = a.data<double>();
      const double* pb = b.data<double>();
      const bool integral = !is_floating(out0.dtype());
      bool passed = true;
      for (int64_t r = 0; r < rows && (passed || !options.fail_fast); ++r) {
        const double* v0 = pa + r * row;
        const double* v1 = pb + r * row;
        const int64_t count = tol > 0 ? std::max<int64_t>(0, row - tol) : row;
        for (int64_t i0 = 0; i0 < count; ++i0) {
          if (v0[i0] == v1[i0]) continue;
          int64_t i1 = -1;
          for (int64_t j = 0; j < row; ++j)
            if (v1[j] == v0[i0]) {
              i1 = j;
              break;
            }
          if (i1 < 0) {
            report_cat(Severity::kError, "FAILED | Value: ", integral ? std::to_string(static_cast<int64_t>(v0[i0])) : format_g(v0[i0], 8),
                       " not found in output");
            passed = false;
          } else if (std::llabs(i1 - i0) > tol) {
            report_cat(Severity::kError, "FAILED | Difference exceeds index tolerance (", tol, ")");
            passed = false;
          }
          if (!passed && options.fail_fast) break;
        }
      }
      const auto range = joint_range(out0, out1);
      log_output_stats(out0, !passed, r0.runner_name + ": " + name0, range);
      log_output_stats(out1, !passed, r1.runner_name + ": " + name1, range);
      if (passed) report_cat(Severity::kFinish, "PASSED | Difference is within index tolerance (", tol, ")");
      result.passed = passed;
      return result;
    };
    return run_comparison(match, options.fail_fast, r0, r1);
  };
}

namespace {

std::vector<double> doubles_up(const Tensor& t) {
  const Tensor d = t.cast(DType::kFloat64);
  auto v = d.values<double>();
  return {v.begin(), v.end()};
}

}  // namespace

CompareFunc distance_metrics(DistanceCompareOptions options) {
  return [options](const IterationResult& r0, const IterationResult& r1) {
    auto match = [&](const std::string& name0, const Tensor& out0, const std::string& name1,
                     const Tensor& out1_in) -> OutputCompareResult {
      const double l2_tol = options.l2_tolerance.get(name0);
      const double cos_min = options.cosine_similarity_threshold.get(name0);
      report_cat(Severity::kInfo, "Tolerance: [L2=", format_g(l2_tol), ", Cosine Similarity min=", format_g(cos_min), "]");
      OutputCompareResult result;
      auto out1 = align_shapes(name0, out0, out1_in, options.check_shapes);
      if (!out1) return result;
      const auto a = doubles_up(out0), b = doubles_up(*out1);
      double sq = 0, dot = 0, na = 0, nb = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        sq += (a[i] - b[i]) * (a[i] - b[i]);
        dot += a[i] * b[i];
        na += a[i] * a[i];
        nb += b[i] * b[i];
      }
      const double l2 = std::sqrt(sq);
      double cosine;
      if (na == 0 && nb == 0) cosine = 1.0;
      else if (na == 0 || nb == 0) cosine = 0.0;
      else cosine = std::clamp(dot / (std::sqrt(na) * std::sqrt(nb)), -1.0, 1.0);
      const bool l2_ok = l2 <= l2_tol, cos_ok = cosine >= cos_min;
      result.passed = l2_ok && cos_ok;
      result.l2_norm = l2;
      result.cosine_similarity = cosine;
      const auto range = joint_range(out0, *out1);
      log_output_stats(out0, !result.passed, r0.runner_name + ": " + name0, range);
      log_output_stats(*out1, !result.passed, r1.runner_name + ": " + name1, range);
      report_cat(Severity::kInfo, "Distance Metrics: ", name0);
      {
        LogIndent indent;
        report_cat(Severity::kInfo, "L2 Norm: ", format_g(l2), " (tolerance: ", format_g(l2_tol), ") | ", l2_ok ? "PASSED" : "FAILED");
        report_cat(Severity::kInfo, "Cosine Similarity: ", format_g(cosine), " (threshold: ", format_g(cos_min), ") | ",
                   cos_ok ? "PASSED" : "FAILED");
      }
      if (!l2_ok)
        report_cat(Severity::kError, "FAILED | Output: '", name0, "' | L2 Norm (", format_g(l2), ") exceeds tolerance (", format_g(l2_tol), ")");
      if (!cos_ok)
        report_cat(Severity::kError, "FAILED | Output: '", name0, "' | Cosine Similarity (", format_g(cosine),
                   ") below threshold (", format_g(cos_min), ")");
      if (result.passed)
        report_cat(Severity::kFinish, "PASSED | Output: '", name0, "' | All metrics passed: L2 Norm, Cosine Similarity");
      return result;
    };
    return run_comparison(match, options.fail_fast, r0, r1);
  };
}

CompareFunc quality_metrics(QualityCompareOptions options) {
  return [options](const IterationResult& r0, const IterationResult& r1) {
    auto match = [&](const std::string& name0, const Tensor& out0, const std::string& name1,
                     const Tensor& out1_in) -> OutputCompareResult {
      const double psnr_min = options.psnr_tolerance.get(name0);
      const double snr_min = options.snr_tolerance.get(name0);
      report_cat(Severity::kInfo, "Quality Metrics Tolerance: [PSNR min=", format_g(psnr_min), " dB, SNR min=",
                 format_g(snr_min), " dB]");
      OutputCompareResult result;
      auto out1 = align_shapes(name0, out0, out1_in, options.check_shapes);
      if (!out1) return result;
      const auto a = doubles_up(out0), b = doubles_up(*out1);
      double mse = 0, signal = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        mse += (a[i] - b[i]) * (a[i] - b[i]);
        signal += a[i] * a[i];
      }
      if (!a.empty()) {
        mse /= static_cast<double>(a.size());
        signal /= static_cast<double>(a.size());
      }
      const double inf = std::numeric_limits<double>::infinity();
      double peak = numpy_stats::max(out0);
      if (peak <= 0) peak = 1.0;
      const double psnr = mse == 0 ? inf : 20 * std::log10(peak) - 10 * std::log10(mse);
      const double snr = mse == 0 ? inf : (signal == 0 ? -inf : 10 * std::log10(signal / mse));
      const bool psnr_ok = psnr >= psnr_min, snr_ok = snr >= snr_min;
      result.passed = psnr_ok && snr_ok;
      result.psnr = psnr;
      result.snr = snr;
      const auto range = joint_range(out0, *out1);
      log_output_stats(out0, !result.passed, r0.runner_name + ": " + name0, range);
      log_output_stats(*out1, !result.passed, r1.runner_name + ": " + name1, range);
      report_cat(Severity::kInfo, "Quality Metrics: ", name0);
      {
        LogIndent indent;
        report_cat(Severity::kInfo, "PSNR: ", format_g(psnr), " dB (min required: ", format_g(psnr_min), " dB) | ",
                   psnr_ok ? "PASSED" : "FAILED");
        report_cat(Severity::kInfo, "SNR: ", format_g(snr), " dB (min required: ", format_g(snr_min), " dB) | ",
                   snr_ok ? "PASSED" : "FAILED");
      }
      if (!psnr_ok)
        report_cat(Severity::kError, "FAILED | Output: '", name0, "' | PSNR (", format_g(psnr), " dB) below required minimum (",
                   format_g(psnr_min), " dB)");
      if (!snr_ok)
        report_cat(Severity::kError, "FAILED | Output: '", name0, "' | SNR (", format_g(snr), " dB) below required minimum (",
                   format_g(snr_min), " dB)");
      if (result.passed)
        report_cat(Severity::kFinish, "PASSED | Output: '", name0, "' | All quality metrics passed: PSNR, SNR");
      return result;
    };
    return run_comparison(match, options.fail_fast, r0, r1);
  };
}

}  // namespace compare_funcs

}  // namespace parity::compare
