#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <type_traits>

#include "core/low_precision.h"

namespace parity {

namespace {

// ---- numpy's summation -------------------------------------------------------------------
// np.add.reduce walks a contiguous array in buffers of 8192 elements and adds each buffer's
// pairwise sum to the accumulator; reproducing this keeps float32 results bit-identical.
constexpr size_t kNumpyBufferSize = 8192;

template <typename A>
A pairwise_sum(const A* a, size_t n) {
  if (n < 8) {
    A res = 0;
    for (size_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    A r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    size_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    A res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

// Sum of value_at(0..n-1) accumulated in type A the way np.add.reduce(dtype=A) does.
template <typename A, typename ValueAt>
A numpy_sum(size_t n, ValueAt&& value_at) {
  A acc = 0;
  std::vector<A> buffer(std::min(n, kNumpyBufferSize));
  for (size_t start = 0; start < n; start += kNumpyBufferSize) {
    const size_t m = std::min(kNumpyBufferSize, n - start);
    for (size_t j = 0; j < m; ++j) buffer[j] = value_at(start + j);
    acc += pairwise_sum(buffer.data(), m);
  }
  return acc;
}

// ---- dtype promotion ------------------------------------------------------------------------
// Polygraphy's cast_up: float16 -> float32, small ints -> int32, uint32 -> int64.
template <typename T> struct CastUpOf { using type = T; };
template <> struct CastUpOf<Float16> { using type = float; };
template <> struct CastUpOf<BFloat16> { using type = float; };
template <> struct CastUpOf<int8_t> { using type = int32_t; };
template <> struct CastUpOf<uint8_t> { using type = int32_t; };
template <> struct CastUpOf<int16_t> { using type = int32_t; };
template <> struct CastUpOf<uint16_t> { using type = int32_t; };
template <> struct CastUpOf<uint32_t> { using type = int64_t; };
template <typename T> using CastUp = typename CastUpOf<T>::type;

template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T> || std::is_same_v<T, Float16> ||
                          std::is_same_v<T, BFloat16>;

template <typename To, typename From>
To to(From v) {
  if constexpr (std::is_same_v<From, bool>) return static_cast<To>(v ? 1 : 0);
  else return convert_scalar<To>(v);
}

template <typename T>
bool is_nan(T v) {
  if constexpr (kIsFloat<T>) return std::isnan(to<double>(v));
  else return false;
}

// np.abs in the element's own dtype (signed minimum wraps, as in numpy).
template <typename T>
T numpy_abs(T v) {
  if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T>) {
    return v;
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return v < 0 ? static_cast<T>(static_cast<U>(0) - static_cast<U>(v)) : v;
  } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return T::from_bits(static_cast<uint16_t>(v.bits & 0x7fffu));
  } else {
    return std::fabs(v);
  }
}

// b - a in T's own arithmetic (integers wrap, half precision rounds), as numpy's subtract.
template <typename T>
double numpy_diff(T b, T a) {
  if constexpr (std::is_same_v<T, bool>) {
    return b == a ? 0.0 : (b ? 1.0 : -1.0);  // numpy refuses; only reachable in principle
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<double>(static_cast<T>(static_cast<U>(static_cast<U>(b) - static_cast<U>(a))));
  } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return static_cast<float>(T(static_cast<float>(b) - static_cast<float>(a)));
  } else {
    return static_cast<double>(static_cast<T>(b - a));
  }
}

Shape unravel(int64_t flat, const Shape& shape) {
  Shape index(shape.size(), 0);
  for (size_t k = shape.size(); k-- > 0;) {
    if (shape[k] == 0) continue;
    index[k] = flat % shape[k];
    flat /= shape[k];
  }
  return index;
}

template <typename T>
double mean_float32(const T* x, size_t n, bool absolute) {
  const float sum = numpy_sum<float>(n, [&](size_t i) { return to<float>(absolute ? numpy_abs(x[i]) : x[i]); });
  return static_cast<float>(static_cast<double>(sum) / static_cast<double>(n));
}

// np.var (ddof=0) of cast-up data C: floats stay in their precision, integers and bool go to f8.
template <typename C>
double numpy_var(const std::vector<C>& x) {
  const size_t n = x.size();
  if constexpr (std::is_floating_point_v<C>) {
    const C mean = numpy_sum<C>(n, [&](size_t i) { return x[i]; }) / static_cast<C>(n);
    const C sum_sq = numpy_sum<C>(n, [&](size_t i) {
      const C d = static_cast<C>(x[i] - mean);
      return static_cast<C>(d * d);
    });
    return static_cast<C>(static_cast<double>(sum_sq) / static_cast<double>(n));
  } else {
    const double mean = numpy_sum<double>(n, [&](size_t i) { return to<double>(x[i]); }) / static_cast<double>(n);
    const double sum_sq = numpy_sum<double>(n, [&](size_t i) {
      const double d = to<double>(x[i]) - mean;
      return d * d;
    });
    return sum_sq / static_cast<double>(n);
  }
}

template <typename C>
double numpy_std(double var) {
  if constexpr (std::is_same_v<C, float>) return std::sqrt(static_cast<float>(var));
  else return std::sqrt(var);
}

// np.median of cast-up data C, from the data sorted in its own type T (cast-up is monotonic, so
// the order is the same; NaNs sort last and make the median NaN).
template <typename C, typename T>
double numpy_median(const std::vector<T>& sorted) {
  const size_t n = sorted.size();
  if constexpr (kIsFloat<T>) {
    if (std::isnan(to<double>(sorted.back()))) return std::numeric_limits<double>::quiet_NaN();
  }
  const size_t mid = n / 2;
  const C upper = to<C>(sorted[mid]);
  if (n % 2 == 1) return to<double>(upper);
  const C lower = to<C>(sorted[mid - 1]);
  if constexpr (std::is_floating_point_v<C>) {
    const C sum = static_cast<C>(static_cast<C>(0) + lower) + upper;
    return static_cast<C>(static_cast<double>(sum) / 2.0);
  } else {
    return (to<double>(lower) + to<double>(upper)) / 2.0;
  }
}

// np.quantile(x, q) ('linear'): virtual index (n-1)*q, interpolated by numpy's _lerp, whose
// difference b-a is taken in the data's dtype and the rest in float64.
template <typename T>
double numpy_quantile_sorted(const std::vector<T>& sorted, double q) {
  const size_t n = sorted.size();
  const double virtual_index = static_cast<double>(n - 1) * q;
  double previous = std::floor(virtual_index);
  size_t lo, hi;
  if (virtual_index >= static_cast<double>(n) - 1) {
    lo = hi = n - 1;
    previous = -1;  // numpy marks out-of-range indexes as -1, which feeds into gamma
  } else {
    lo = static_cast<size_t>(previous);
    hi = lo + 1;
  }
  const double gamma = virtual_index - previous;
  const T a = sorted[lo], b = sorted[hi];
  const double diff = numpy_diff(b, a);
  if (gamma >= 0.5) return to<double>(b) - diff * (1 - gamma);
  return to<double>(a) + diff * gamma;
}

template <typename T>
bool less_for_sort(T a, T b) {
  if constexpr (kIsFloat<T>) {
    // NaNs sort last, as in numpy.
    const double x = to<double>(a), y = to<double>(b);
    if (std::isnan(x)) return false;
    if (std::isnan(y)) return true;
    return x < y;
  } else {
    return a < b;
  }
}

template <typename T>
std::vector<T> sorted_copy(const Tensor& tensor) {
  auto values = tensor.values<T>();
  std::vector<T> v(values.begin(), values.end());
  std::sort(v.begin(), v.end(), less_for_sort<T>);
  return v;
}

template <typename T>
double quantile_of_sorted(const std::vector<T>& sorted, double q) {
  if (sorted.empty()) return std::numeric_limits<double>::infinity();
  if constexpr (kIsFloat<T>) {
    if (std::isnan(to<double>(sorted.back()))) return std::numeric_limits<double>::quiet_NaN();
  }
  return numpy_quantile_sorted(sorted, q);
}

template <typename T>
double quantile_of(const Tensor& tensor, double q) {
  return quantile_of_sorted(sorted_copy<T>(tensor), q);
}

template <typename T>
TensorStats stats_of(const Tensor& tensor) {
  using C = CastUp<T>;
  TensorStats s;
  s.count = tensor.numel();
  s.has_quantiles = !std::is_same_v<T, bool>;
  const size_t n = static_cast<size_t>(tensor.numel());
  if (n == 0) {
    // Polygraphy: cast-up statistics of empty arrays are 0, means are nan, quantiles inf.
    s.mean = s.avg_magnitude = std::numeric_limits<double>::quiet_NaN();
    s.p90 = s.p95 = s.p99 = std::numeric_limits<double>::infinity();
    return s;
  }
  const T* x = tensor.data<T>();
  s.mean = mean_float32(x, n, false);
  s.avg_magnitude = mean_float32(x, n, true);

  std::vector<C> up(n);
  for (size_t i = 0; i < n; ++i) up[i] = to<C>(x[i]);
  // min/max with numpy's NaN propagation: the first NaN is both the minimum and the maximum.
  size_t imin = 0, imax = 0;
  bool nan_found = false;
  for (size_t i = 0; i < n && !nan_found; ++i) {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(up[i])) {
        imin = imax = i;
        nan_found = true;
        break;
      }
    }
    if (up[i] < up[imin]) imin = i;
    if (up[i] > up[imax]) imax = i;
  }
  s.min = to<double>(up[imin]);
  s.max = to<double>(up[imax]);
  s.argmin = unravel(static_cast<int64_t>(imin), tensor.shape());
  s.argmax = unravel(static_cast<int64_t>(imax), tensor.shape());
  s.var = numpy_var(up);
  s.std_dev = numpy_std<C>(s.var);
  up.clear();
  up.shrink_to_fit();
  const std::vector<T> sorted = sorted_copy<T>(tensor);
  s.median = numpy_median<C>(sorted);
  if (s.has_quantiles) {
    s.p90 = quantile_of_sorted(sorted, 0.9);
    s.p95 = quantile_of_sorted(sorted, 0.95);
    s.p99 = quantile_of_sorted(sorted, 0.99);
  }
  return s;
}

// Strings, complex numbers and numpy's untyped '|V1' bytes (ml_dtypes' 1-byte types read from a
// file that does not say which) have no statistics, as numpy computes none for them.
bool has_stats(const Tensor& tensor) {
  return tensor.defined() && tensor.dtype() != DType::kString && !is_complex(tensor.dtype()) &&
         tensor.dtype() != kNumpyVoid1;
}

void check_has_stats(const Tensor& tensor, const char* what) {
  PARITY_CHECK(has_stats(tensor), kUnsupported, what, " of ", dtype_name(tensor.dtype()), " tensors are not supported");
}

// ---- histogram ------------------------------------------------------------------------------

// Rounds a double to the histogram's bin dtype E.
template <typename E>
double round_to(double v) {
  if constexpr (std::is_same_v<E, double>) return v;
  else return static_cast<double>(static_cast<float>(E(static_cast<float>(v))));
}
template <>
double round_to<float>(double v) {
  return static_cast<float>(v);
}

template <typename T>
std::optional<Histogram> histogram_of(const Tensor& tensor, std::optional<std::pair<double, double>> range) {
  if constexpr (std::is_same_v<T, bool>) {
    return std::nullopt;
  } else {
    // numpy's bin dtype: the data's float type; integers use float64.
    using E = std::conditional_t<kIsFloat<T>, T, double>;
    constexpr int kBins = 10;
    const T* x = tensor.data<T>();
    const size_t n = static_cast<size_t>(tensor.numel());
    double first = 0, last = 1;
    bool edges_in_data_type = false;  // scalar arithmetic on them happens in T until widened
    if (range) {
      first = range->first;
      last = range->second;
      if (first > last || !std::isfinite(first) || !std::isfinite(last)) return std::nullopt;
    } else if (n > 0) {
      T lo = x[0], hi = x[0];
      for (size_t i = 0; i < n; ++i) {
        if (is_nan(x[i])) return std::nullopt;
        if (to<double>(x[i]) < to<double>(lo)) lo = x[i];
        if (to<double>(x[i]) > to<double>(hi)) hi = x[i];
      }
      first = to<double>(lo);
      last = to<double>(hi);
      if (!std::isfinite(first) || !std::isfinite(last)) return std::nullopt;
      edges_in_data_type = true;
    }
    if (first == last) {  // widened to float64 python scalars
      first -= 0.5;
      last += 0.5;
      edges_in_data_type = false;
    }
    double width;
    if (edges_in_data_type && kIsFloat<T>) width = numpy_diff(static_cast<T>(convert_scalar<T>(last)), static_cast<T>(convert_scalar<T>(first)));
    else width = last - first;  // exact for integers (numpy subtracts them unsigned)
    const double norm = kBins / width;

    Histogram h;
    h.edges.resize(kBins + 1);
    const double step = (last - first) / kBins;
    for (int i = 0; i < kBins; ++i) h.edges[i] = round_to<E>(i * step + first);
    h.edges[kBins] = round_to<E>(last);
    h.counts.assign(kBins, 0);

    const double first_e = round_to<E>(first);
    const double norm_e = round_to<E>(norm);
    const double last_e = round_to<E>(last);
    for (size_t i = 0; i < n; ++i) {
      const double v = round_to<E>(to<double>(x[i]));
      if (!(v >= first_e && v <= last_e)) continue;
      double f;
      if constexpr (std::is_same_v<E, double>) f = (v - first) * norm;
      else f = round_to<E>(round_to<E>(v - first_e) * norm_e);
      int64_t index = static_cast<int64_t>(f);
      if (index == kBins) --index;
      if (index > 0 && v < h.edges[index]) --index;
      if (index < kBins - 1 && v >= h.edges[index + 1]) ++index;
      h.counts[static_cast<size_t>(std::clamp<int64_t>(index, 0, kBins - 1))]++;
    }
    return h;
  }
}

}  // namespace

// The low-precision types are summarized by their values: floats as float32, integers as int32.
static Tensor widened(const Tensor& tensor) {
  if (!is_low_precision(tensor.dtype())) return tensor;
  return tensor.cast(is_low_precision_integer(tensor.dtype()) ? DType::kInt32 : DType::kFloat32);
}

float numpy_pairwise_sum(const float* values, size_t n) { return pairwise_sum(values, n); }

TensorStats compute_stats(const Tensor& tensor_in) {
  check_has_stats(tensor_in, "statistics");
  const Tensor tensor = widened(tensor_in);
  return visit_numeric_dtype(tensor.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return stats_of<T>(tensor);
  });
}

double quantile(const Tensor& tensor_in, double q) {
  check_has_stats(tensor_in, "quantiles");
  const Tensor tensor = widened(tensor_in);
  PARITY_CHECK(tensor.dtype() != DType::kBool, kUnsupported, "quantiles of bool tensors are not supported");
  PARITY_CHECK(q >= 0 && q <= 1, kInvalidArgument, "quantile ", q, " is outside [0, 1]");
  return visit_numeric_dtype(tensor.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return quantile_of<T>(tensor, q);
  });
}

std::string format_g(double value, int precision) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
  return buffer;
}


std::string format_stats(const TensorStats& s) {
  auto g = [](double v) { return format_g(v, 5); };
  // Polygraphy's argmin of an empty array is the integer 0, not a tuple.
  auto at = [&](const Shape& index) { return s.count == 0 ? std::string("0") : shape_to_string(index); };
  std::string out = "mean=" + g(s.mean) + ", std-dev=" + g(s.std_dev) + ", var=" + g(s.var) +
                    ", median=" + g(s.median) + ", min=" + g(s.min) + " at " + at(s.argmin) +
                    ", max=" + g(s.max) + " at " + at(s.argmax) + ", avg-magnitude=" + g(s.avg_magnitude);
  if (s.has_quantiles) out += ", p90=" + g(s.p90) + ", p95=" + g(s.p95) + ", p99=" + g(s.p99);
  return out;
}

std::string stats_string(const Tensor& tensor) {
  if (!has_stats(tensor)) return "<Error while computing statistics>";
  return format_stats(compute_stats(tensor));
}

std::optional<Histogram> compute_histogram(const Tensor& tensor_in, std::optional<std::pair<double, double>> range) {
  check_has_stats(tensor_in, "histograms");
  const Tensor tensor = widened(tensor_in);
  return visit_numeric_dtype(tensor.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return histogram_of<T>(tensor, range);
  });
}

std::string format_histogram(const Tensor& tensor, std::optional<std::pair<double, double>> range) {
  if (!has_stats(tensor)) return "";
  const auto h = compute_histogram(tensor, range);
  if (!h) return "";
  const int64_t max_count = *std::max_element(h->counts.begin(), h->counts.end());
  if (max_count == 0) return "None";  // Polygraphy returns None for empty tensors and prints it
  std::vector<std::string> edges;
  for (double e : h->edges) edges.push_back(format_g(e, 3));
  size_t start_width = 0, end_width = 0;
  for (size_t i = 0; i < edges.size(); ++i) {
    start_width = std::max(start_width, edges[i].size());
    if (i > 0) end_width = std::max(end_width, edges[i].size());
  }
  auto pad = [](const std::string& s, size_t width) {
    return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
  };
  constexpr int kMaxBarWidth = 40;
  std::string out = "---- Histogram ----\n";
  out += pad("Bin Range", start_width + end_width + 5) + "|  Num Elems | Visualization";
  for (size_t i = 0; i < h->counts.size(); ++i) {
    char count[32];
    std::snprintf(count, sizeof(count), "%10lld", static_cast<long long>(h->counts[i]));
    const int bar = static_cast<int>(kMaxBarWidth * static_cast<double>(h->counts[i]) / static_cast<double>(max_count));
    out += "\n(" + pad(edges[i], start_width) + ", " + pad(edges[i + 1], end_width) + ") | " + count + " | " +
           std::string(static_cast<size_t>(bar), '#');
  }
  return out;
}

}  // namespace parity
