#include "core/numpy_format.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <vector>

#include <fmt/format.h>

namespace parity {

namespace {

constexpr int64_t kThreshold = 1000;  // numpy's print threshold
constexpr int64_t kEdgeItems = 3;
constexpr size_t kLineWidth = 75;
constexpr int kPrecision = 8;

// The flat indices numpy shows, per axis: all of them, or the edge items around a gap (-1).
std::vector<int64_t> shown_indices(int64_t length, bool summarize) {
  std::vector<int64_t> out;
  if (!summarize || length <= 2 * kEdgeItems) {
    for (int64_t i = 0; i < length; ++i) out.push_back(i);
  } else {
    for (int64_t i = 0; i < kEdgeItems; ++i) out.push_back(i);
    out.push_back(-1);
    for (int64_t i = length - kEdgeItems; i < length; ++i) out.push_back(i);
  }
  return out;
}

// Shortest text that reads back as the same value at the tensor's precision, with at most
// kPrecision digits after the point (numpy's unique=True, precision=8).
std::string shortest_fixed(double v, bool single) {
  for (int p = 0; p <= kPrecision; ++p) {
    const std::string s = fmt::format("{:.{}f}", v, p);
    const double back = std::strtod(s.c_str(), nullptr);
    if (single ? static_cast<float>(back) == static_cast<float>(v) : back == v) return s;
  }
  return fmt::format("{:.{}f}", v, kPrecision);
}

std::string shortest_scientific(double v, bool single) {
  for (int p = 0; p <= 16; ++p) {
    const std::string s = fmt::format("{:.{}e}", v, p);
    const double back = std::strtod(s.c_str(), nullptr);
    if (single ? static_cast<float>(back) == static_cast<float>(v) : back == v) return s;
  }
  return fmt::format("{:e}", v);
}

// Formats every shown float like numpy's FloatingFormat: a common layout (fixed or scientific),
// integer parts right-aligned, fractions left-aligned and padded with spaces.
class NumpyFloatFormat {
 public:
  NumpyFloatFormat(const std::vector<double>& values, bool single) : single_(single) {
    double max_abs = 0, min_abs = std::numeric_limits<double>::infinity();
    for (double v : values) {
      if (!std::isfinite(v) || v == 0) continue;
      max_abs = std::max(max_abs, std::fabs(v));
      min_abs = std::min(min_abs, std::fabs(v));
    }
    scientific_ = max_abs >= 1e8 || (max_abs > 0 && (min_abs < 1e-4 || max_abs / min_abs > 1e3));
    for (double v : values) {
      const auto [head, tail] = split(raw(v));
      pad_left_ = std::max(pad_left_, head.size());
      pad_right_ = std::max(pad_right_, tail.size());
    }
  }

  std::string operator()(double v) const {
    auto [head, tail] = split(raw(v));
    head.insert(0, pad_left_ - std::min(pad_left_, head.size()), ' ');
    if (scientific_ && tail.find('e') != std::string::npos) {
      // numpy pads a scientific mantissa with zeros: 1.000000e-01
      tail.insert(tail.find('e'), pad_right_ - std::min(pad_right_, tail.size()), '0');
    } else {
      tail.append(pad_right_ - std::min(pad_right_, tail.size()), ' ');
    }
    return head + tail;
  }

 private:
  std::string raw(double v) const {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    if (!scientific_) {
      std::string s = shortest_fixed(v, single_);
      if (s.find('.') == std::string::npos) s += '.';
      while (s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
      if (s.size() >= 2 && s.back() == '0' && s[s.size() - 2] == '.') s.pop_back();
      return s;
    }
    std::string s = shortest_scientific(v, single_);  // d.ddde+XX
    const size_t e = s.find('e');
    std::string mantissa = s.substr(0, e), exponent = s.substr(e + 1);
    if (mantissa.find('.') == std::string::npos) mantissa += '.';
    while (mantissa.back() == '0') mantissa.pop_back();
    const char sign = exponent[0] == '-' ? '-' : '+';
    std::string digits = exponent.substr(exponent[0] == '-' || exponent[0] == '+' ? 1 : 0);
    while (digits.size() > 2 && digits[0] == '0') digits.erase(0, 1);
    if (digits.size() < 2) digits.insert(0, "0");
    return mantissa + "e" + sign + digits;
  }

  // Integer part (with sign and '.') and the rest, for alignment.
  static std::pair<std::string, std::string> split(const std::string& s) {
    const size_t dot = s.find('.');
    if (dot == std::string::npos) return {s, ""};
    return {s.substr(0, dot + 1), s.substr(dot + 1)};
  }

  bool single_;
  bool scientific_ = false;
  size_t pad_left_ = 0, pad_right_ = 0;
};

class NumpyPrinter {
 public:
  explicit NumpyPrinter(const Tensor& t) : t_(t), shape_(t.shape()), strides_(shape_strides(t.shape())) {
    summarize_ = t.numel() > kThreshold;
    std::vector<int64_t> flat;
    collect(0, 0, flat);
    if (is_floating(t.dtype())) {
      std::vector<double> values;
      for (int64_t i : flat) values.push_back(t.value_as_double(i));
      floats_.emplace(values, t.dtype() != DType::kFloat64);
    } else {
      for (int64_t i : flat) width_ = std::max(width_, element(i).size());
    }
  }

  std::string print() {
    if (shape_.empty()) return raw_element(0);
    return block(0, 0, 1);
  }

 private:
  void collect(size_t axis, int64_t offset, std::vector<int64_t>& out) const {
    if (axis == shape_.size()) {
      out.push_back(offset);
      return;
    }
    for (int64_t i : shown_indices(shape_[axis], summarize_))
      if (i >= 0) collect(axis + 1, offset + i * strides_[axis], out);
  }

  std::string raw_element(int64_t i) const {
    switch (t_.dtype()) {
      case DType::kBool: return t_.value_as_double(i) != 0 ? "True" : "False";
      case DType::kString: return "'" + t_.values<std::string>()[static_cast<size_t>(i)] + "'";
      default: break;
    }
    if (is_floating(t_.dtype())) return NumpyFloatFormat({t_.value_as_double(i)}, t_.dtype() != DType::kFloat64)(t_.value_as_double(i));
    if (is_complex(t_.dtype())) return "<complex>";
    return fmt::format("{}", static_cast<long long>(t_.value_as_double(i)));
  }

  std::string element(int64_t i) const {
    if (floats_) return (*floats_)(t_.value_as_double(i));
    return raw_element(i);
  }

  std::string padded(int64_t i) const {
    std::string s = element(i);
    if (!floats_ && s.size() < width_) s.insert(0, width_ - s.size(), ' ');
    return s;
  }

  // One axis: "[" + items + "]"; `column` is where this "[" stands on its line.
  std::string block(size_t axis, int64_t offset, size_t column) {
    std::string out = "[";
    const auto indices = shown_indices(shape_[axis], summarize_);
    if (axis + 1 == shape_.size()) {
      size_t line = column;
      bool first = true;
      for (int64_t i : indices) {
        const std::string item = i < 0 ? "..." : padded(offset + i * strides_[axis]);
        if (!first) {
          // numpy wraps when the item and the closing bracket would pass the line width.
          if (line + 1 + item.size() + 1 > kLineWidth) {
            while (!out.empty() && out.back() == ' ') out.pop_back();  // numpy strips wrapped lines
            out += "\n" + std::string(column, ' ');
            line = column;
          } else {
            out += ' ';
            ++line;
          }
        }
        out += item;
        line += item.size();
        first = false;
      }
      return out + "]";
    }
    const std::string separator = std::string(shape_.size() - axis - 1, '\n') + std::string(column, ' ');
    bool first = true;
    for (int64_t i : indices) {
      if (!first) out += separator;
      out += i < 0 ? "..." : block(axis + 1, offset + i * strides_[axis], column + 1);
      first = false;
    }
    return out + "]";
  }

  const Tensor& t_;
  Shape shape_;
  std::vector<int64_t> strides_;
  bool summarize_ = false;
  std::optional<NumpyFloatFormat> floats_;
  size_t width_ = 0;
};

}  // namespace

std::string format_numpy(const Tensor& tensor) {
  if (!tensor.defined()) return "None";
  if (tensor.numel() == 0) return "[]";
  return NumpyPrinter(tensor).print();
}

}  // namespace parity
