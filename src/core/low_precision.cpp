#include "core/low_precision.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "core/status.h"

namespace parity {
namespace {

/// How a small float format spends its special encodings.
enum class Specials {
  kIeee,        // e5m2: exponent all ones is infinity (mantissa 0) or NaN
  kAllOnesNan,  // e4m3fn: only S.1111.111 is NaN, no infinity
  kNegZeroNan,  // *fnuz: 0x80 (negative zero) is the only NaN, no infinity, no -0
  kNone,        // float4e2m1: every pattern is a finite number
};

struct FloatFormat {
  int exp_bits;
  int man_bits;
  int bias;
  Specials specials;
  double max_finite;
};

const FloatFormat* float_format(DType dtype) {
  static constexpr FloatFormat kE4M3FN{4, 3, 7, Specials::kAllOnesNan, 448.0};
  static constexpr FloatFormat kE4M3FNUZ{4, 3, 8, Specials::kNegZeroNan, 240.0};
  static constexpr FloatFormat kE5M2{5, 2, 15, Specials::kIeee, 57344.0};
  static constexpr FloatFormat kE5M2FNUZ{5, 2, 16, Specials::kNegZeroNan, 57344.0};
  static constexpr FloatFormat kE2M1{2, 1, 1, Specials::kNone, 6.0};
  switch (dtype) {
    case kFloat8E4M3FN: return &kE4M3FN;
    case kFloat8E4M3FNUZ: return &kE4M3FNUZ;
    case kFloat8E5M2: return &kE5M2;
    case kFloat8E5M2FNUZ: return &kE5M2FNUZ;
    case kFloat4E2M1: return &kE2M1;
    default: return nullptr;
  }
}

uint8_t sign_bit(const FloatFormat& f) { return static_cast<uint8_t>(1u << (f.exp_bits + f.man_bits)); }

double decode_float(const FloatFormat& f, uint8_t bits) {
  const uint8_t sign = sign_bit(f);
  const bool negative = (bits & sign) != 0;
  const int e = (bits >> f.man_bits) & ((1 << f.exp_bits) - 1);
  const int m = bits & ((1 << f.man_bits) - 1);
  const int e_max = (1 << f.exp_bits) - 1;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (f.specials == Specials::kNegZeroNan && bits == sign) return nan;
  if (f.specials == Specials::kAllOnesNan && e == e_max && m == (1 << f.man_bits) - 1) return nan;
  if (f.specials == Specials::kIeee && e == e_max)
    return m == 0 ? (negative ? -INFINITY : INFINITY) : nan;
  const double magnitude = e == 0 ? std::ldexp(m, 1 - f.bias - f.man_bits)
                                  : std::ldexp((1 << f.man_bits) + m, e - f.bias - f.man_bits);
  return negative ? -magnitude : magnitude;
}

/// The pattern of an exactly representable, finite, non-negative magnitude.
uint8_t encode_magnitude(const FloatFormat& f, double r) {
  if (r == 0) return 0;
  int ex = 0;
  std::frexp(r, &ex);
  const int unbiased = ex - 1;
  const int e_min = 1 - f.bias;
  if (unbiased < e_min) return static_cast<uint8_t>(std::ldexp(r, f.man_bits - e_min));  // subnormal
  const int m = static_cast<int>(std::ldexp(r, f.man_bits - unbiased)) - (1 << f.man_bits);
  return static_cast<uint8_t>(((unbiased + f.bias) << f.man_bits) | m);
}

/// What an infinity or an out-of-range value becomes when the cast does not saturate.
uint8_t overflow_pattern(const FloatFormat& f, bool negative) {
  const uint8_t sign = negative ? sign_bit(f) : 0;
  switch (f.specials) {
    case Specials::kIeee: return static_cast<uint8_t>(sign | (((1 << f.exp_bits) - 1) << f.man_bits));
    case Specials::kAllOnesNan: return static_cast<uint8_t>(sign | (sign_bit(f) - 1));
    case Specials::kNegZeroNan: return sign_bit(f);
    case Specials::kNone: break;
  }
  return static_cast<uint8_t>(sign | encode_magnitude(f, f.max_finite));
}

uint8_t encode_float(const FloatFormat& f, double x, bool saturate) {
  const bool negative = std::signbit(x);
  const uint8_t sign = negative ? sign_bit(f) : 0;
  if (std::isnan(x)) {
    switch (f.specials) {
      case Specials::kNegZeroNan: return sign_bit(f);
      case Specials::kNone: return sign_bit(f);  // ONNX writes float4e2m1's NaN as -0
      default: return static_cast<uint8_t>(sign | (sign_bit(f) - 1));
    }
  }
  // float4e2m1 has neither NaN nor infinity: it always saturates.
  const bool clamp = saturate || f.specials == Specials::kNone;
  const uint8_t max_pattern = static_cast<uint8_t>(sign | encode_magnitude(f, f.max_finite));
  if (std::isinf(x)) return clamp ? max_pattern : overflow_pattern(f, negative);
  const double a = std::fabs(x);
  int ex = 0;
  std::frexp(a, &ex);
  const int unbiased = std::max(ex - 1, 1 - f.bias);
  const double quantum = std::ldexp(1.0, unbiased - f.man_bits);
  // Dividing by a power of two is exact, so nearbyint rounds the true value to nearest even.
  const double r = std::nearbyint(a / quantum) * quantum;
  if (r > f.max_finite) return clamp ? max_pattern : overflow_pattern(f, negative);
  const uint8_t magnitude = encode_magnitude(f, r);
  if (magnitude == 0 && f.specials == Specials::kNegZeroNan) return 0;  // no negative zero
  return static_cast<uint8_t>(sign | magnitude);
}

/// float8e8m0: a bare biased exponent (2^(bits - 127)), 0xFF is NaN. The conversion works on the
/// float32 bit pattern, as ONNX's reference does: the sign is dropped, the exponent field kept and
/// rounded by the mantissa per round mode.
uint8_t encode_e8m0(double x, bool saturate, RoundMode round) {
  const float f = static_cast<float>(x);
  uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof(bits));
  const uint32_t exponent = (bits >> 23) & 0xFF;
  if (exponent == 0xFF) return 0xFF;  // NaN and infinities
  bool round_up = false;
  if (round == RoundMode::kUp) {
    round_up = (bits & 0x7FFFFF) != 0;
  } else if (round == RoundMode::kNearestEven) {
    const bool guard = (bits & 0x400000) != 0;
    const bool round_bit = (bits & 0x200000) != 0;
    const bool sticky = (bits & 0x1FFFFF) != 0;
    round_up = guard && (round_bit || sticky || exponent > 0);
  }
  if (round_up && saturate && exponent == 0xFE) round_up = false;
  return static_cast<uint8_t>(exponent + (round_up ? 1 : 0));
}

struct IntFormat {
  int bits;
  bool is_signed;
};

std::optional<IntFormat> int_format(DType dtype) {
  switch (dtype) {
    case kInt4: return IntFormat{4, true};
    case kUInt4: return IntFormat{4, false};
    case kInt2: return IntFormat{2, true};
    case kUInt2: return IntFormat{2, false};
    default: return std::nullopt;
  }
}

uint8_t encode_int(IntFormat f, double x, bool saturate) {
  const double lo = f.is_signed ? -std::ldexp(1.0, f.bits - 1) : 0.0;
  const double hi = f.is_signed ? std::ldexp(1.0, f.bits - 1) - 1 : std::ldexp(1.0, f.bits) - 1;
  if (std::isnan(x)) return 0;
  double v = 0;
  if (saturate) {
    v = std::clamp(std::nearbyint(x), lo, hi);
  } else {
    // C++/numpy integer casts truncate toward zero and keep the low bits (two's complement).
    const double span = std::ldexp(1.0, f.bits);
    v = std::isinf(x) ? 0.0 : std::trunc(x);
    v -= std::floor(v / span) * span;  // now in [0, span)
    if (f.is_signed && v > hi) v -= span;
  }
  return static_cast<uint8_t>(static_cast<int8_t>(v));
}

}  // namespace

bool is_low_precision(DType d) {
  const int v = static_cast<int>(d);
  return v >= static_cast<int>(kFloat8E4M3FN) && v <= static_cast<int>(kInt2);
}

bool is_low_precision_integer(DType d) { return int_format(d).has_value(); }

size_t dtype_bits(DType dtype) {
  switch (dtype) {
    case kInt4:
    case kUInt4:
    case kFloat4E2M1: return 4;
    case kInt2:
    case kUInt2: return 2;
    default: return dtype_size(dtype) * 8;
  }
}

bool is_sub_byte(DType dtype) { return dtype_bits(dtype) < 8 && dtype != DType::kUndefined; }

size_t packed_size_bytes(DType dtype, int64_t n) {
  return (static_cast<size_t>(n) * dtype_bits(dtype) + 7) / 8;
}

double low_precision_to_double(DType dtype, uint8_t bits) {
  if (const FloatFormat* f = float_format(dtype)) return decode_float(*f, bits);
  if (dtype == kFloat8E8M0)
    return bits == 0xFF ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, static_cast<int>(bits) - 127);
  if (const auto f = int_format(dtype))
    return f->is_signed ? static_cast<double>(static_cast<int8_t>(bits)) : static_cast<double>(bits);
  PARITY_ASSERT(false, "dtype ", dtype_name(dtype), " is not a low-precision type");
  return 0;
}

uint8_t low_precision_from_double(DType dtype, double value, bool saturate, RoundMode round) {
  if (const FloatFormat* f = float_format(dtype)) return encode_float(*f, value, saturate);
  if (dtype == kFloat8E8M0) return encode_e8m0(value, saturate, round);
  if (const auto f = int_format(dtype)) return encode_int(*f, value, saturate);
  PARITY_ASSERT(false, "dtype ", dtype_name(dtype), " is not a low-precision type");
  return 0;
}

Tensor cast_low_precision(const Tensor& in, DType to, bool saturate, RoundMode round) {
  const DType from = in.dtype();
  PARITY_CHECK(from != DType::kString && to != DType::kString && !is_complex(from) && !is_complex(to), kUnsupported,
               "cannot cast ", dtype_name(from), " to ", dtype_name(to));
  if (from == to) return in.clone();
  Tensor out(to, in.shape());
  const int64_t n = in.numel();
  if (is_low_precision(to)) {
    // Integer targets always wrap in Cast; saturate is a float8 attribute.
    const bool clamp = saturate && !int_format(to).has_value();
    auto* dst = static_cast<uint8_t*>(out.raw_data());
    if (is_low_precision(from)) {
      const auto* src = static_cast<const uint8_t*>(in.raw_data());
      for (int64_t i = 0; i < n; ++i) dst[i] = low_precision_from_double(to, low_precision_to_double(from, src[i]), clamp, round);
    } else {
      for (int64_t i = 0; i < n; ++i) dst[i] = low_precision_from_double(to, in.value_as_double(i), clamp, round);
    }
    return out;
  }
  PARITY_ASSERT(is_low_precision(from), "cast_low_precision called for ", dtype_name(from), " -> ", dtype_name(to));
  const auto* src = static_cast<const uint8_t*>(in.raw_data());
  visit_numeric_dtype(to, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dst = out.data<T>();
    for (int64_t i = 0; i < n; ++i) dst[i] = convert_scalar<T>(low_precision_to_double(from, src[i]));
  });
  return out;
}

uint8_t to_ml_dtypes_byte(DType dtype, uint8_t element) {
  const size_t bits = dtype_bits(dtype);
  return bits < 8 ? static_cast<uint8_t>(element & ((1u << bits) - 1)) : element;
}

uint8_t from_ml_dtypes_byte(DType dtype, uint8_t byte) {
  const size_t bits = dtype_bits(dtype);
  if (bits >= 8) return byte;
  const unsigned shift = 8 - static_cast<unsigned>(bits);
  if (dtype == kInt4 || dtype == kInt2)
    return static_cast<uint8_t>(static_cast<int8_t>(static_cast<uint8_t>(byte << shift)) >> shift);
  return static_cast<uint8_t>(byte & ((1u << bits) - 1));
}

Tensor resolve_numpy_void(const Tensor& tensor, DType expected) {
  if (tensor.dtype() != kNumpyVoid1 || !is_low_precision(expected) || dtype_size(expected) != 1) return tensor;
  Tensor out(expected, tensor.shape());
  const auto* src = static_cast<const uint8_t*>(tensor.raw_data());
  auto* dst = static_cast<uint8_t*>(out.raw_data());
  for (int64_t i = 0; i < tensor.numel(); ++i) dst[i] = from_ml_dtypes_byte(expected, src[i]);
  return out;
}

std::vector<uint8_t> pack_sub_byte(DType dtype, const uint8_t* elements, int64_t n) {
  const size_t bits = dtype_bits(dtype);
  PARITY_ASSERT(bits == 4 || bits == 2, "dtype ", dtype_name(dtype), " is not a sub-byte type");
  const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  const size_t per_byte = 8 / bits;
  std::vector<uint8_t> packed(packed_size_bytes(dtype, n), 0);
  for (int64_t i = 0; i < n; ++i) {
    const size_t slot = static_cast<size_t>(i) % per_byte;
    packed[static_cast<size_t>(i) / per_byte] |= static_cast<uint8_t>((elements[i] & mask) << (slot * bits));
  }
  return packed;
}

void unpack_sub_byte(DType dtype, const uint8_t* packed, int64_t n, uint8_t* elements) {
  const size_t bits = dtype_bits(dtype);
  PARITY_ASSERT(bits == 4 || bits == 2, "dtype ", dtype_name(dtype), " is not a sub-byte type");
  const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  const size_t per_byte = 8 / bits;
  const bool sign_extend = dtype == kInt4 || dtype == kInt2;
  const uint8_t sign = static_cast<uint8_t>(1u << (bits - 1));
  for (int64_t i = 0; i < n; ++i) {
    const size_t slot = static_cast<size_t>(i) % per_byte;
    uint8_t v = static_cast<uint8_t>((packed[static_cast<size_t>(i) / per_byte] >> (slot * bits)) & mask);
    if (sign_extend && (v & sign)) v = static_cast<uint8_t>(v | ~mask);
    elements[i] = v;
  }
}

}  // namespace parity
