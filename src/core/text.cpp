#include "core/text.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "core/status.h"

namespace parity {

namespace {

constexpr std::string_view kBlanks = " \t\r";

bool is_digits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// "2x3x4" (the compact spelling of a static shape) -> "2,3,4"; anything else unchanged.
std::string compact_dims_as_list(const std::string& body) {
  if (body.find('x') == std::string::npos) return body;
  std::string list = body;
  size_t start = 0;
  while (start <= body.size()) {
    const size_t x = std::min(body.find('x', start), body.size());
    if (!is_digits(std::string_view(body).substr(start, x - start))) return body;
    if (x < body.size()) list[x] = ',';
    start = x + 1;
  }
  return list;
}

}  // namespace

std::string trim(std::string_view text) {
  const size_t begin = text.find_first_not_of(kBlanks);
  if (begin == std::string_view::npos) return {};
  return std::string(text.substr(begin, text.find_last_not_of(kBlanks) - begin + 1));
}

std::vector<std::string> split_list(std::string_view text, const std::string& what) {
  std::string body = trim(text);
  if (!body.empty() && (body.front() == '[' || body.front() == '(')) {
    const char close = body.front() == '[' ? ']' : ')';
    PARITY_CHECK(body.size() >= 2 && body.back() == close, kInvalidArgument, what, ": unbalanced brackets in '",
                 std::string(text), "'");
    body = body.substr(1, body.size() - 2);
  }
  std::vector<std::string> items;
  if (trim(body).empty()) return items;
  size_t start = 0;
  while (start <= body.size()) {
    const size_t comma = std::min(body.find(',', start), body.size());
    items.push_back(trim(std::string_view(body).substr(start, comma - start)));
    start = comma + 1;
  }
  return items;
}

std::pair<std::string, std::string> split_name_value(const std::string& text) {
  int depth = 0;
  size_t split = std::string::npos;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '[' || text[i] == '(') ++depth;
    if (text[i] == ']' || text[i] == ')') --depth;
    if (text[i] == ':' && depth == 0) split = i;
  }
  if (split == std::string::npos) return {"", text};
  return {text.substr(0, split), text.substr(split + 1)};
}

double parse_double(const std::string& text, const std::string& what) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  PARITY_CHECK(!text.empty() && end && *end == '\0' && errno != ERANGE, kInvalidArgument, "invalid number '", text,
               "' for ", what);
  return v;
}

int64_t parse_int(const std::string& text, const std::string& what) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  PARITY_CHECK(!text.empty() && end && *end == '\0' && errno != ERANGE, kInvalidArgument, "invalid integer '", text,
               "' for ", what);
  return v;
}

DimShape parse_dim_shape(const std::string& text, const std::string& what) {
  const std::string body = trim(text);
  const bool bracketed = !body.empty() && (body.front() == '[' || body.front() == '(');
  const std::string list = bracketed ? body : compact_dims_as_list(body);
  DimShape shape;
  for (std::string field : split_list(list, what)) {
    if (field.size() >= 2 && (field.front() == '\'' || field.front() == '"') && field.back() == field.front())
      field = field.substr(1, field.size() - 2);
    PARITY_CHECK(!field.empty(), kInvalidArgument, what, ": empty dimension in shape '", text, "'");
    if (field.find_first_not_of("-0123456789") == std::string::npos) {
      const int64_t value = parse_int(field, what);
      PARITY_CHECK(value >= -1, kInvalidArgument, what, ": negative dimension ", value, " in shape '", text, "'");
      shape.dims.push_back(value >= 0 ? Dim(value) : Dim::dynamic());
    } else {
      shape.dims.push_back(field == "?" ? Dim::dynamic() : Dim::dynamic(field));
    }
  }
  // Zero dimensions aside, the element count must be a number: kernels size loops and buffers
  // by the other dimensions even when a tensor is empty.
  int64_t elements = 1;
  for (const Dim& d : shape.dims)
    PARITY_CHECK(!d.is_static() || d.value == 0 || !__builtin_mul_overflow(elements, d.value, &elements),
                 kInvalidArgument, what, ": shape '", text, "' has more elements than a 64-bit count can hold");
  return shape;
}

Shape parse_shape(const std::string& text, const std::string& what) {
  Shape shape;
  for (const Dim& d : parse_dim_shape(text, what).dims) {
    PARITY_CHECK(d.is_static(), kInvalidArgument, what, ": shape '", text,
                 "' must have a number >= 0 for every dimension");
    shape.push_back(d.value);
  }
  return shape;
}

uint64_t parse_size(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  std::string suffix = end ? std::string(end) : std::string();
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.size() == 2 && suffix[1] == 'B') suffix.pop_back();  // "4KB" like "4K"
  double scale = 1;
  if (suffix == "K") scale = 1024.0;
  else if (suffix == "M") scale = 1024.0 * 1024;
  else if (suffix == "G") scale = 1024.0 * 1024 * 1024;
  else
    PARITY_CHECK(suffix.empty() || suffix == "B", kInvalidArgument, "invalid size '", text, "' for ", what,
                 "; use a byte count with an optional K, M or G suffix");
  PARITY_CHECK(end != text.c_str() && std::isfinite(value) && value >= 0, kInvalidArgument, "invalid size '", text,
               "' for ", what);
  return static_cast<uint64_t>(std::llround(value * scale));
}

ScaledBytes scale_bytes(double bytes, int smallest, int largest) {
  static constexpr const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  PARITY_ASSERT(0 <= smallest && smallest <= largest && largest <= 4, "scale_bytes: powers ", smallest, "..", largest);
  ScaledBytes out;
  out.value = bytes;
  for (; out.power < smallest; ++out.power) out.value /= 1024.0;
  while (out.value >= 1024.0 && out.power < largest) {
    out.value /= 1024.0;
    ++out.power;
  }
  out.unit = kUnits[out.power];
  return out;
}

}  // namespace parity
