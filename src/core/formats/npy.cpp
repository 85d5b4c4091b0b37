#include "core/formats/npy.h"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <memory>
#include <cstring>
#include <optional>
#include <vector>

#include "core/formats/file_io.h"
#include "core/low_precision.h"

namespace parity {

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kArrayAlign = 64;         // numpy's ARRAY_ALIGN
constexpr size_t kGrowthAxisMaxDigits = 21;  // numpy pads headers so the shape can grow in place

// A value of the Python dict literal that forms the .npy header.
struct HeaderValue {
  enum class Kind { kString, kBool, kTuple, kOther } kind = Kind::kOther;
  std::string text;
  bool flag = false;
  std::vector<int64_t> ints;
};

// Parses the header dict ("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }").
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view what) : text_(text), what_(what) {}

  std::vector<std::pair<std::string, HeaderValue>> parse_dict() {
    std::vector<std::pair<std::string, HeaderValue>> items;
    skip_space();
    expect('{');
    for (;;) {
      skip_space();
      if (peek() == '}') {
        ++pos_;
        break;
      }
      std::string key = parse_string();
      skip_space();
      expect(':');
      skip_space();
      items.emplace_back(std::move(key), parse_value());
      skip_space();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != '}') {
        bad("expected ',' or '}'");
      }
    }
    skip_space();
    if (pos_ != text_.size()) bad("unexpected text after the header dict");
    return items;
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  void expect(char c) {
    if (peek() != c) bad(std::string("expected '") + c + "'");
    ++pos_;
  }
  [[noreturn]] void bad(const std::string& why) const {
    fail(ErrorCode::kInvalidModel, what_, ": malformed .npy header (", why, " at offset ", pos_,
         "): ", text_);
  }
  std::string parse_string() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') bad("expected a quoted string");
    ++pos_;
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      out += text_[pos_++];
    }
    if (pos_ >= text_.size()) bad("unterminated string");
    ++pos_;
    return out;
  }
  bool starts_with_word(std::string_view word) const {
    return text_.substr(pos_, word.size()) == word;
  }
  int64_t parse_int() {
    const size_t start = pos_;
    if (peek() == '-' || peek() == '+') ++pos_;
    while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
    const std::string digits(text_.substr(start, pos_ - start));
    if (digits.empty() || digits == "-" || digits == "+") bad("expected an integer");
    if (peek() == 'L' || peek() == 'l') ++pos_;  // Python 2 long literal
    try {
      return std::stoll(digits);
    } catch (const std::exception&) {
      bad("integer out of range");
    }
  }
  HeaderValue parse_value() {
    HeaderValue v;
    const char c = peek();
    if (c == '\'' || c == '"') {
      v.kind = HeaderValue::Kind::kString;
      v.text = parse_string();
    } else if (starts_with_word("True") || starts_with_word("False")) {
      v.kind = HeaderValue::Kind::kBool;
      v.flag = starts_with_word("True");
      pos_ += v.flag ? 4 : 5;
    } else if (c == '(') {
      v.kind = HeaderValue::Kind::kTuple;
      ++pos_;
      for (;;) {
        skip_space();
        if (peek() == ')') {
          ++pos_;
          break;
        }
        v.ints.push_back(parse_int());
        skip_space();
        if (peek() == ',') ++pos_;
        else if (peek() != ')') bad("expected ',' or ')' in the shape");
      }
    } else {
      // Something numpy can write but parity cannot hold (e.g. a structured dtype's list):
      // skip the balanced value so the error can name the key.
      v.kind = HeaderValue::Kind::kOther;
      const size_t start = pos_;
      int depth = 0;
      while (pos_ < text_.size()) {
        const char ch = text_[pos_];
        if (ch == '\'' || ch == '"') {
          parse_string();
          continue;
        }
        if (ch == '[' || ch == '(' || ch == '{') ++depth;
        if (ch == ']' || ch == ')' || ch == '}') {
          if (depth == 0) break;
          --depth;
        }
        if (ch == ',' && depth == 0) break;
        ++pos_;
      }
      v.text = std::string(text_.substr(start, pos_ - start));
    }
    return v;
  }

  std::string_view text_;
  std::string_view what_;
  size_t pos_ = 0;
};

uint32_t read_le(std::string_view bytes, size_t offset, size_t width) {
  uint32_t v = 0;
  for (size_t i = 0; i < width; ++i)
    v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  return v;
}

DType dtype_from_descr(const std::string& descr, std::string_view what) {
  if (descr.size() > 2 && descr[0] == '>' && descr.substr(1) != "i1" && descr.substr(1) != "u1" &&
      descr.substr(1) != "b1") {
    fail(ErrorCode::kUnsupported, what, ": big-endian data (dtype '", descr,
         "') is not supported; save it little-endian (e.g. arr.astype(arr.dtype.newbyteorder('<')))");
  }
  auto dtype = dtype_from_numpy_descr(descr);
  PARITY_CHECK(dtype, kUnsupported, what, ": numpy dtype '", descr,
               "' is not supported (supported: bool, int8..int64, uint8..uint64, float16/32/64, "
               "complex64/128, and ml_dtypes' bfloat16 '<V2', float8_e5m2 '<f1' and 1-byte types '<V1')");
  return *dtype;
}

// Reorders a Fortran-ordered (column-major) buffer into C order.
std::string fortran_to_c_order(std::string_view data, const Shape& shape, size_t item_size) {
  const int64_t numel = shape_numel(shape);
  std::string out(data.size(), '\0');
  const size_t rank = shape.size();
  Shape f_strides;
  f_strides.reserve(rank);
  int64_t stride = 1;
  for (int64_t d : shape) {
    f_strides.push_back(stride);
    stride *= d;
  }
  Shape index(rank, 0);
  for (int64_t c = 0; c < numel; ++c) {
    int64_t f = 0;
    for (size_t k = 0; k < rank; ++k) f += index[k] * f_strides[k];
    std::memcpy(out.data() + static_cast<size_t>(c) * item_size,
                data.data() + static_cast<size_t>(f) * item_size, item_size);
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < shape[k]) break;
      index[k] = 0;
    }
  }
  return out;
}


}  // namespace

bool looks_like_npy(std::string_view bytes) { return bytes.substr(0, kMagic.size()) == kMagic; }

namespace {

// Where an array sits inside a .npy file.
struct NpyLayout {
  DType dtype = DType::kUndefined;
  Shape shape;
  size_t data_offset = 0;
  size_t byte_count = 0;
  bool fortran_order = false;
};

NpyLayout parse_npy(std::string_view bytes, std::string_view what) {
  PARITY_CHECK(bytes.size() >= kMagic.size() + 2 && looks_like_npy(bytes), kInvalidModel, what,
               ": not a .npy file (missing the \\x93NUMPY magic string)");
  const int major = static_cast<unsigned char>(bytes[6]);
  const int minor = static_cast<unsigned char>(bytes[7]);
  PARITY_CHECK(major >= 1 && major <= 3 && minor == 0, kUnsupported, what,
               ": unsupported .npy format version ", major, ".", minor, " (supported: 1.0, 2.0, 3.0)");
  const size_t length_width = major == 1 ? 2 : 4;
  const size_t header_start = 8 + length_width;
  PARITY_CHECK(bytes.size() >= header_start, kInvalidModel, what,
               ": truncated .npy file (no header length)");
  const size_t header_length = read_le(bytes, 8, length_width);
  PARITY_CHECK(bytes.size() - header_start >= header_length, kInvalidModel, what,
               ": truncated .npy file (header says ", header_length, " bytes, file has ",
               bytes.size() - header_start, ")");
  const std::string_view header = bytes.substr(header_start, header_length);

  std::optional<HeaderValue> descr, fortran_order, shape_value;
  for (auto& [key, value] : HeaderParser(header, what).parse_dict()) {
    if (key == "descr") descr = value;
    else if (key == "fortran_order") fortran_order = value;
    else if (key == "shape") shape_value = value;
  }
  PARITY_CHECK(descr && fortran_order && shape_value, kInvalidModel, what,
               ": .npy header lacks one of 'descr', 'fortran_order', 'shape': ", header);
  PARITY_CHECK(descr->kind == HeaderValue::Kind::kString, kUnsupported, what,
               ": structured numpy dtypes are not supported (descr ", descr->text, ")");
  PARITY_CHECK(fortran_order->kind == HeaderValue::Kind::kBool, kInvalidModel, what,
               ": 'fortran_order' must be True or False in ", header);
  PARITY_CHECK(shape_value->kind == HeaderValue::Kind::kTuple, kInvalidModel, what,
               ": 'shape' must be a tuple in ", header);
  const DType dtype = dtype_from_descr(descr->text, what);
  const Shape shape = shape_value->ints;
  const size_t item_size = dtype_size(dtype);
  size_t byte_count = item_size;
  for (int64_t d : shape) {
    PARITY_CHECK(d >= 0, kInvalidModel, what, ": negative dimension in shape ",
                 shape_to_string(shape));
    PARITY_CHECK(!__builtin_mul_overflow(byte_count, static_cast<size_t>(d), &byte_count),
                 kInvalidModel, what, ": shape ", shape_to_string(shape), " is too large");
  }
  const size_t available = bytes.size() - header_start - header_length;
  PARITY_CHECK(available >= byte_count, kInvalidModel, what, ": truncated .npy data: shape ",
               shape_to_string(shape), " of ", dtype_name(dtype), " needs ", byte_count,
               " bytes, found ", available);
  return NpyLayout{dtype, shape, header_start + header_length, byte_count,
                   fortran_order->flag && shape.size() > 1};
}

Tensor copy_tensor(std::string_view bytes, const NpyLayout& layout) {
  const std::string_view data = bytes.substr(layout.data_offset, layout.byte_count);
  if (layout.fortran_order) {
    const std::string reordered = fortran_to_c_order(data, layout.shape, dtype_size(layout.dtype));
    return Tensor::from_bytes(layout.dtype, layout.shape, reordered.data(), reordered.size());
  }
  return Tensor::from_bytes(layout.dtype, layout.shape, data.data(), data.size());
}

// Keeps a whole .npy file alive as a tensor's memory, so large arrays are not copied again.
class NpyStringStorage final : public Storage {
 public:
  explicit NpyStringStorage(std::string bytes) : bytes_(std::move(bytes)) {}
  std::byte* data() override { return reinterpret_cast<std::byte*>(bytes_.data()); }
  size_t size_bytes() const override { return bytes_.size(); }

 private:
  std::string bytes_;
};

}  // namespace

Tensor npy_from_bytes(std::string_view bytes, std::string_view what) {
  return copy_tensor(bytes, parse_npy(bytes, what));
}

Tensor npy_from_string(std::string&& bytes, std::string_view what) {
  const NpyLayout layout = parse_npy(bytes, what);
  if (layout.fortran_order || layout.byte_count == 0) return copy_tensor(bytes, layout);
  auto storage = std::make_shared<NpyStringStorage>(std::move(bytes));
  const auto address = reinterpret_cast<uintptr_t>(storage->data() + layout.data_offset);
  const size_t alignment = std::min<size_t>(dtype_size(layout.dtype), alignof(std::max_align_t));
  if (address % alignment != 0) {
    const std::string_view view(reinterpret_cast<const char*>(storage->data()), storage->size_bytes());
    return copy_tensor(view, layout);
  }
  return Tensor(layout.dtype, layout.shape, std::move(storage), layout.data_offset);
}

std::string npy_to_bytes(const Tensor& tensor) {
  PARITY_CHECK(tensor.defined(), kInvalidArgument, "cannot write an undefined tensor to .npy");
  const auto descr = numpy_descr(tensor.dtype());
  PARITY_CHECK(descr, kUnsupported, "cannot write a ", dtype_name(tensor.dtype()),
               " tensor to .npy: numpy has no such dtype");
  // ml_dtypes keeps int4/uint4/int2/uint2/float4 in a byte's low bits with the rest zero.
  Tensor ml_dtypes_form;
  if (is_sub_byte(tensor.dtype())) {
    ml_dtypes_form = Tensor(tensor.dtype(), tensor.shape());
    const auto* src = static_cast<const uint8_t*>(tensor.raw_data());
    auto* dst = static_cast<uint8_t*>(ml_dtypes_form.raw_data());
    for (int64_t i = 0; i < tensor.numel(); ++i) dst[i] = to_ml_dtypes_byte(tensor.dtype(), src[i]);
  }
  const Tensor& data = ml_dtypes_form.defined() ? ml_dtypes_form : tensor;
  const Shape& shape = tensor.shape();
  const std::string shape_repr = shape_to_string(shape);
  std::string header = "{'descr': '" + *descr + "', 'fortran_order': False, 'shape': " +
                       shape_repr + ", }";
  if (!shape.empty()) {
    const size_t digits = std::to_string(shape[0]).size();
    if (digits < kGrowthAxisMaxDigits) header.append(kGrowthAxisMaxDigits - digits, ' ');
  }
  // Pad with spaces and a final newline so magic + length field + header is a multiple of 64
  // (numpy adds a full 64 bytes when it is already aligned).
  auto wrap = [&](size_t length_width) {
    const size_t header_length = header.size() + 1;
    const size_t pad = kArrayAlign - ((kMagic.size() + 2 + length_width + header_length) % kArrayAlign);
    return std::pair<size_t, size_t>(header_length + pad, pad);
  };
  size_t length_width = 2;
  auto [total_header, pad] = wrap(2);
  if (total_header > 0xffff) {
    length_width = 4;
    std::tie(total_header, pad) = wrap(4);
  }
  std::string out;
  out.reserve(kMagic.size() + 2 + length_width + total_header + tensor.size_bytes());
  out += kMagic;
  out += static_cast<char>(length_width == 2 ? 1 : 2);
  out += '\0';
  for (size_t i = 0; i < length_width; ++i)
    out += static_cast<char>((total_header >> (8 * i)) & 0xff);
  out += header;
  out.append(pad, ' ');
  out += '\n';
  if (data.size_bytes() > 0)
    out.append(static_cast<const char*>(data.raw_data()), data.size_bytes());
  return out;
}

Tensor read_npy(const std::string& path) {
  return with_error_context({.file = path}, [&] { return npy_from_string(formats::read_binary_file(path), path); });
}

void write_npy(const std::string& path, const Tensor& tensor) {
  formats::write_binary_file(path, npy_to_bytes(tensor));
}

}  // namespace parity
