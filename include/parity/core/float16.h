// IEEE binary16 and bfloat16 storage types with round-to-nearest-even conversions.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace parity {

namespace detail {
inline uint16_t float_to_half_bits(float value) {
  const uint32_t f = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (f >> 16) & 0x8000u;
  const uint32_t abs = f & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN: keep NaN quiet and non-zero payload
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? (0x200u | ((abs >> 13) & 0x3ffu)) : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 65520 -> inf
  if (abs < 0x38800000u) {  // result is subnormal (or zero) in half precision
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);  // < half of smallest subnormal
    const uint32_t exponent = abs >> 23;
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - exponent;  // 14 + (113 - exponent) - 1
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1u);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  // Normal: rebias exponent (127 -> 15) and round mantissa from 23 to 10 bits (RNE).
  uint32_t half = ((abs - 0x38000000u) >> 13);
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

inline float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      int e = -1;
      do {
        ++e;
        mantissa <<= 1;
      } while ((mantissa & 0x400u) == 0);
      bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mantissa & 0x3ffu) << 13);
    }
  } else if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  }
  return std::bit_cast<float>(bits);
}

inline uint16_t float_to_bfloat16_bits(float value) {
  uint32_t f = std::bit_cast<uint32_t>(value);
  if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((f >> 16) | 0x40u);  // quiet NaN
  const uint32_t rounding_bias = 0x7fffu + ((f >> 16) & 1u);
  return static_cast<uint16_t>((f + rounding_bias) >> 16);
}

inline float bfloat16_bits_to_float(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}
}  // namespace detail

/// IEEE 754 binary16 value (storage only; arithmetic goes through float).
struct Float16 {
  uint16_t bits = 0;  ///< Raw binary16 bit pattern.
  Float16() = default;  ///< Positive zero.
  /// Rounds `v` to the nearest binary16 (ties to even; overflow gives inf, NaN stays NaN).
  explicit Float16(float v) : bits(detail::float_to_half_bits(v)) {}
  explicit Float16(double v) : Float16(static_cast<float>(v)) {}  ///< Rounds through float.
  /// The value whose bit pattern is `b`.
  static Float16 from_bits(uint16_t b) {
    Float16 h;
    h.bits = b;
    return h;
  }
  /// Exact widening to float.
  operator float() const { return detail::half_bits_to_float(bits); }  // NOLINT(implicit)
};

/// bfloat16 value (storage only; arithmetic goes through float).
struct BFloat16 {
  uint16_t bits = 0;  ///< Raw bfloat16 bit pattern (the upper half of a float's).
  BFloat16() = default;  ///< Positive zero.
  /// Rounds `v` to the nearest bfloat16 (ties to even; NaN stays a quiet NaN).
  explicit BFloat16(float v) : bits(detail::float_to_bfloat16_bits(v)) {}
  explicit BFloat16(double v) : BFloat16(static_cast<float>(v)) {}  ///< Rounds through float.
  /// The value whose bit pattern is `b`.
  static BFloat16 from_bits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
  /// Exact widening to float.
  operator float() const { return detail::bfloat16_bits_to_float(bits); }  // NOLINT(implicit)
};

static_assert(sizeof(Float16) == 2 && sizeof(BFloat16) == 2);

}  // namespace parity
