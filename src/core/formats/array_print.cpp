#include "core/formats/array_print.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/low_precision.h"

namespace parity {

namespace {

// ---- shortest round-trip digits ------------------------------------------------------------

// Digits and decimal exponent of the shortest decimal that reads back as the same value of the
// element's type: value = 0.d1d2d3... * 10^(point).
struct Decimal {
  std::string digits;  // no leading zeros; "0" for zero
  int point = 0;       // position of the decimal point relative to the digits
  bool negative = false;
};

Decimal decimal_from_scientific(const std::string& text) {
  // text like "-1.2345e-05"
  Decimal d;
  size_t i = 0;
  if (text[i] == '-') {
    d.negative = true;
    ++i;
  }
  const size_t e = text.find_first_of("eE", i);
  std::string mantissa = text.substr(i, e - i);
  const int exponent = e == std::string::npos ? 0 : std::stoi(text.substr(e + 1));
  mantissa.erase(std::remove(mantissa.begin(), mantissa.end(), '.'), mantissa.end());
  while (mantissa.size() > 1 && mantissa.back() == '0') mantissa.pop_back();
  d.digits = mantissa;
  d.point = exponent + 1;
  if (d.digits == "0") d.point = 1;
  return d;
}

template <typename T>
Decimal shortest_decimal(T value) {
  char buffer[64];
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    auto result = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
    return decimal_from_scientific(std::string(buffer, result.ptr));
  } else {
    // Half precision types: the fewest significant digits that convert back to the same bits.
    const double v = static_cast<float>(value);
    for (int digits = 1; digits <= 17; ++digits) {
      std::snprintf(buffer, sizeof(buffer), "%.*e", digits - 1, v);
      if (T(static_cast<float>(std::strtod(buffer, nullptr))).bits == value.bits)
        return decimal_from_scientific(buffer);
    }
    std::snprintf(buffer, sizeof(buffer), "%.16e", v);
    return decimal_from_scientific(buffer);
  }
}

// Rounds the exact value to `fraction_digits` decimals (or significant digits - 1 in scientific
// form) when the shortest form is longer, as numpy's Dragon4 does with a precision cutoff.
std::string trim_zeros(std::string s) {
  const size_t dot = s.find('.');
  if (dot == std::string::npos) return s;
  while (s.size() > dot + 1 && s.back() == '0') s.pop_back();
  return s;
}

// "123.456" style with at most `precision` fractional digits, trailing zeros trimmed, the '.' kept.
std::string positional(const Decimal& d, double exact, int precision) {
  const int fraction_digits = std::max(0, static_cast<int>(d.digits.size()) - d.point);
  if (fraction_digits > precision) {
    char buffer[512];
    std::snprintf(buffer, sizeof(buffer), "%.*f", precision, exact);
    std::string s = trim_zeros(buffer);
    if (s.find('.') == std::string::npos) s += '.';
    return s;
  }
  std::string s = d.negative ? "-" : "";
  if (d.point <= 0) {
    s += "0." + std::string(static_cast<size_t>(-d.point), '0') + d.digits;
  } else if (static_cast<size_t>(d.point) >= d.digits.size()) {
    s += d.digits + std::string(static_cast<size_t>(d.point) - d.digits.size(), '0') + ".";
  } else {
    s += d.digits.substr(0, static_cast<size_t>(d.point)) + "." + d.digits.substr(static_cast<size_t>(d.point));
  }
  if (d.digits == "0") s = (d.negative ? "-0." : "0.");
  return s;
}

struct Scientific {
  std::string sign_int;  // "-1"
  std::string fraction;  // "2345" (may be empty)
  int exponent = 0;
};

Scientific scientific(const Decimal& d, double exact, int precision) {
  Scientific out;
  if (static_cast<int>(d.digits.size()) - 1 > precision) {
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), "%.*e", precision, exact);
    return scientific(decimal_from_scientific(buffer), exact, precision);
  }
  out.sign_int = (d.negative ? "-" : "") + d.digits.substr(0, 1);
  out.fraction = d.digits.substr(1);
  out.exponent = d.digits == "0" ? 0 : d.point - 1;
  return out;
}

std::string exponent_text(int exponent, int min_digits) {
  std::string digits = std::to_string(std::abs(exponent));
  if (static_cast<int>(digits.size()) < min_digits) digits.insert(0, static_cast<size_t>(min_digits) - digits.size(), '0');
  return std::string(exponent < 0 ? "e-" : "e+") + digits;
}

// ---- element formatters (numpy's FloatingFormat / IntegerFormat / BoolFormat) -------------------

using Formatter = std::function<std::string(int64_t)>;

template <typename T>
Formatter float_formatter(const Tensor& tensor, const std::vector<int64_t>& shown) {
  const T* x = tensor.data<T>();
  auto as_double = [x](int64_t i) { return static_cast<double>(static_cast<std::conditional_t<std::is_same_v<T, double>, double, float>>(x[i])); };
  constexpr int kPrecision = 8;
  double max_abs = 0, min_abs = std::numeric_limits<double>::infinity();
  bool any_finite = false, any_non_finite = false, negative_inf = false;
  for (int64_t i : shown) {
    const double v = as_double(i);
    if (!std::isfinite(v)) {
      any_non_finite = true;
      if (std::isinf(v) && v < 0) negative_inf = true;
      continue;
    }
    any_finite = true;
    if (v != 0) {
      max_abs = std::max(max_abs, std::fabs(v));
      min_abs = std::min(min_abs, std::fabs(v));
    }
  }
  const bool exp_format = min_abs != std::numeric_limits<double>::infinity() &&
                          (max_abs >= 1e8 || min_abs < 1e-4 || max_abs / min_abs > 1000.);
  size_t pad_left = 0, pad_right = 0;
  int precision = kPrecision, exp_size = -1;
  if (any_finite && exp_format) {
    int max_fraction = 0, max_exp_digits = 0;
    for (int64_t i : shown) {
      const double v = as_double(i);
      if (!std::isfinite(v)) continue;
      const Scientific s = scientific(shortest_decimal(x[i]), v, kPrecision);
      max_fraction = std::max(max_fraction, static_cast<int>(s.fraction.size()));
      max_exp_digits = std::max(max_exp_digits, static_cast<int>(exponent_text(s.exponent, 2).size()) - 2);
      pad_left = std::max(pad_left, s.sign_int.size());
    }
    precision = max_fraction;
    exp_size = max_exp_digits;
    pad_right = static_cast<size_t>(exp_size + 2 + precision);
  } else if (any_finite) {
    for (int64_t i : shown) {
      const double v = as_double(i);
      if (!std::isfinite(v)) continue;
      const std::string s = positional(shortest_decimal(x[i]), v, kPrecision);
      const size_t dot = s.find('.');
      pad_left = std::max(pad_left, dot);
      pad_right = std::max(pad_right, s.size() - dot - 1);
    }
  }
  if (any_non_finite) {
    const size_t offset = pad_right + 1;
    const size_t inf_len = 3 + (negative_inf ? 1 : 0);
    if (3 > offset) pad_left = std::max(pad_left, 3 - offset);
    if (inf_len > offset) pad_left = std::max(pad_left, inf_len - offset);
  }
  return [=](int64_t i) -> std::string {
    const double v = as_double(i);
    if (!std::isfinite(v)) {
      const std::string text = std::isnan(v) ? "nan" : (v < 0 ? "-inf" : "inf");
      const size_t width = pad_left + pad_right + 1;
      return std::string(width > text.size() ? width - text.size() : 0, ' ') + text;
    }
    if (exp_format) {
      const Scientific s = scientific(shortest_decimal(x[i]), v, kPrecision);
      std::string fraction = s.fraction;
      if (static_cast<int>(fraction.size()) < precision) fraction.append(static_cast<size_t>(precision) - fraction.size(), '0');
      std::string out = std::string(pad_left > s.sign_int.size() ? pad_left - s.sign_int.size() : 0, ' ') + s.sign_int + "." +
                        fraction + exponent_text(s.exponent, exp_size);
      return out;
    }
    const std::string s = positional(shortest_decimal(x[i]), v, kPrecision);
    const size_t dot = s.find('.');
    const size_t right = s.size() - dot - 1;
    return std::string(pad_left > dot ? pad_left - dot : 0, ' ') + s + std::string(pad_right > right ? pad_right - right : 0, ' ');
  };
}

template <typename T>
Formatter int_formatter(const Tensor& tensor, const std::vector<int64_t>& shown) {
  const T* x = tensor.data<T>();
  size_t width = 0;
  for (int64_t i : shown) width = std::max(width, std::to_string(x[i]).size());
  return [=](int64_t i) {
    const std::string s = std::to_string(x[i]);
    return std::string(width - s.size(), ' ') + s;
  };
}

Formatter make_formatter(const Tensor& tensor, const std::vector<int64_t>& shown) {
  if (is_low_precision(tensor.dtype())) {
    // ml_dtypes prints float8/float4 elements by their float value and int4/int2 as integers;
    // the widened copy lives as long as the formatter.
    const bool integer = is_low_precision_integer(tensor.dtype());
    Tensor wide = tensor.cast(integer ? DType::kInt32 : DType::kFloat32);
    Formatter f = integer ? int_formatter<int32_t>(wide, shown) : float_formatter<float>(wide, shown);
    return [wide, f](int64_t i) { return f(i); };
  }
  switch (tensor.dtype()) {
    case DType::kFloat32: return float_formatter<float>(tensor, shown);
    case DType::kFloat64: return float_formatter<double>(tensor, shown);
    case DType::kFloat16: return float_formatter<Float16>(tensor, shown);
    case DType::kBFloat16: return float_formatter<BFloat16>(tensor, shown);
    case DType::kInt8: return int_formatter<int8_t>(tensor, shown);
    case DType::kInt16: return int_formatter<int16_t>(tensor, shown);
    case DType::kInt32: return int_formatter<int32_t>(tensor, shown);
    case DType::kInt64: return int_formatter<int64_t>(tensor, shown);
    case DType::kUInt8: return int_formatter<uint8_t>(tensor, shown);
    case DType::kUInt16: return int_formatter<uint16_t>(tensor, shown);
    case DType::kUInt32: return int_formatter<uint32_t>(tensor, shown);
    case DType::kUInt64: return int_formatter<uint64_t>(tensor, shown);
    case DType::kBool: {
      const bool* x = tensor.data<bool>();
      return [x](int64_t i) { return std::string(x[i] ? " True" : "False"); };
    }
    default: {
      if (tensor.dtype() == kNumpyVoid1) {
        // numpy prints unstructured void elements as bytes literals in hex.
        const auto* x = static_cast<const uint8_t*>(tensor.raw_data());
        return [x](int64_t i) {
          char buffer[16];
          std::snprintf(buffer, sizeof(buffer), "b'\\x%02x'", x[i]);
          return std::string(buffer);
        };
      }
      // Complex numbers and strings: plain text, no numpy-identical layout.
      return [&tensor](int64_t i) -> std::string {
        if (tensor.dtype() == DType::kString) return "'" + tensor.data<std::string>()[i] + "'";
        char buffer[96];
        if (tensor.dtype() == DType::kComplex64) {
          const auto c = tensor.data<std::complex<float>>()[i];
          std::snprintf(buffer, sizeof(buffer), "%g%+gj", c.real(), c.imag());
        } else {
          const auto c = tensor.data<std::complex<double>>()[i];
          std::snprintf(buffer, sizeof(buffer), "%g%+gj", c.real(), c.imag());
        }
        return buffer;
      };
    }
  }
}

// Scalar str() (numpy scalar types): positional between 1e-4 and 1e16, else scientific.
std::string scalar_string(const Tensor& tensor) {
  auto float_text = [](auto value, double v) -> std::string {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    const Decimal d = shortest_decimal(value);
    const double a = std::fabs(v);
    if (a == 0 || (a >= 1e-4 && a < 1e16)) {
      std::string s = positional(d, v, 1000);
      if (s.back() == '.') s += '0';
      return s;
    }
    const Scientific s = scientific(d, v, 1000);
    return s.sign_int + (s.fraction.empty() ? "" : "." + s.fraction) + exponent_text(s.exponent, 2);
  };
  switch (tensor.dtype()) {
    case DType::kFloat32: return float_text(tensor.data<float>()[0], tensor.data<float>()[0]);
    case DType::kFloat64: return float_text(tensor.data<double>()[0], tensor.data<double>()[0]);
    case DType::kFloat16: return float_text(tensor.data<Float16>()[0], static_cast<float>(tensor.data<Float16>()[0]));
    case DType::kBFloat16: return float_text(tensor.data<BFloat16>()[0], static_cast<float>(tensor.data<BFloat16>()[0]));
    case DType::kBool: return tensor.data<bool>()[0] ? "True" : "False";
    default: {
      if (is_low_precision(tensor.dtype()) && !is_low_precision_integer(tensor.dtype())) {
        const float v = tensor.cast(DType::kFloat32).data<float>()[0];
        return float_text(v, v);
      }
      std::string s = make_formatter(tensor, {0})(0);
      return s.substr(s.find_first_not_of(' '));
    }
  }
}

struct Printer {
  const Tensor& tensor;
  Formatter format;
  int64_t edge_items;
  bool summarize;
  size_t line_width;
  std::vector<int64_t> strides;

  void extend_line(std::string& s, std::string& line, const std::string& word, size_t width,
                   const std::string& next_prefix) const {
    bool wrap = line.size() + word.size() > width;
    if (line.size() <= next_prefix.size()) wrap = false;
    if (wrap) {
      const size_t end = line.find_last_not_of(' ');
      s += (end == std::string::npos ? "" : line.substr(0, end + 1)) + "\n";
      line = next_prefix;
    }
    line += word;
  }

  std::string recurse(size_t axis, int64_t offset, const std::string& hanging, size_t width) const {
    const Shape& shape = tensor.shape();
    if (axis == shape.size()) return format(offset);
    const std::string next_hanging = hanging + " ";
    const size_t next_width = width - 1;
    const int64_t length = shape[axis];
    const bool show_summary = summarize && 2 * edge_items < length;
    const int64_t leading = show_summary ? edge_items : 0;
    const int64_t trailing = show_summary ? edge_items : length;
    std::string s;
    if (axis + 1 == shape.size()) {
      const size_t elem_width = width - 1;
      std::string line = hanging;
      for (int64_t i = 0; i < leading; ++i) {
        extend_line(s, line, recurse(axis + 1, offset + i * strides[axis], next_hanging, next_width), elem_width, hanging);
        line += " ";
      }
      if (show_summary) {
        extend_line(s, line, "...", elem_width, hanging);
        line += " ";
      }
      for (int64_t i = trailing; i > 1; --i) {
        extend_line(s, line, recurse(axis + 1, offset + (length - i) * strides[axis], next_hanging, next_width),
                    elem_width, hanging);
        line += " ";
      }
      extend_line(s, line, recurse(axis + 1, offset + (length - 1) * strides[axis], next_hanging, next_width),
                  elem_width, hanging);
      s += line;
    } else {
      const std::string line_sep = std::string(shape.size() - axis - 1, '\n');
      for (int64_t i = 0; i < leading; ++i)
        s += hanging + recurse(axis + 1, offset + i * strides[axis], next_hanging, next_width) + line_sep;
      if (show_summary) s += hanging + "..." + line_sep;
      for (int64_t i = trailing; i > 1; --i)
        s += hanging + recurse(axis + 1, offset + (length - i) * strides[axis], next_hanging, next_width) + line_sep;
      s += hanging + recurse(axis + 1, offset + (length - 1) * strides[axis], next_hanging, next_width);
    }
    return "[" + s.substr(hanging.size()) + "]";
  }
};

// Flat indexes of the elements numpy shows (the leading/trailing edge items of each axis).
void collect_shown(const Shape& shape, const std::vector<int64_t>& strides, size_t axis, int64_t offset,
                   int64_t edge_items, bool summarize, std::vector<int64_t>& out) {
  if (axis == shape.size()) {
    out.push_back(offset);
    return;
  }
  const int64_t n = shape[axis];
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && 2 * edge_items < n && i == edge_items) i = n - edge_items;
    collect_shown(shape, strides, axis + 1, offset + i * strides[axis], edge_items, summarize, out);
  }
}

}  // namespace

std::string array_to_string(const Tensor& tensor, const ArrayPrintOptions& options) {
  if (!tensor.defined()) return "None";
  if (tensor.rank() == 0) return scalar_string(tensor);
  if (tensor.numel() == 0) return "[]";
  const int64_t edge_items = options.edge_items < 0 ? std::numeric_limits<int32_t>::max() : options.edge_items;
  const size_t line_width = options.line_width < 0 ? std::numeric_limits<int32_t>::max()
                                                   : static_cast<size_t>(std::max<int64_t>(options.line_width, 1));
  const bool summarize = tensor.numel() > options.threshold;
  const auto strides = shape_strides(tensor.shape());
  std::vector<int64_t> shown;
  collect_shown(tensor.shape(), strides, 0, 0, edge_items, summarize, shown);
  Printer printer{tensor, make_formatter(tensor, shown), edge_items, summarize, line_width, strides};
  return printer.recurse(0, 0, " ", line_width);
}

}  // namespace parity
