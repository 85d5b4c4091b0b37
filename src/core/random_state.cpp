#include "core/random_state.h"

#include <bit>
#include <limits>
#include <type_traits>

#include "core/status.h"

namespace parity {

namespace {

// Smallest all-ones bit mask covering `max` (numpy's gen_mask).
uint64_t covering_mask(uint64_t max) {
  uint64_t mask = max;
  for (int shift = 1; shift <= 32; shift <<= 1) mask |= mask >> shift;
  return mask;
}

// numpy hands out 8- and 16-bit values by slicing one 32-bit draw, low bits first.
template <typename Small>
class BufferedDraw {
 public:
  explicit BufferedDraw(NumpyRandomState& state) : state_(state) {}
  Small next() {
    if (remaining_ == 0) {
      buffer_ = state_.next_uint32();
      remaining_ = 32 / kBits - 1;
    } else {
      buffer_ >>= kBits;
      --remaining_;
    }
    return static_cast<Small>(buffer_);
  }

 private:
  static constexpr int kBits = sizeof(Small) * 8;
  NumpyRandomState& state_;
  uint32_t buffer_ = 0;
  int remaining_ = 0;
};

// Values off + [0, rng] drawn through a Small-bit unsigned generator (masked rejection).
template <typename Small, typename Out>
void fill_small(NumpyRandomState& state, Small off, Small rng, Out* out, int64_t count) {
  BufferedDraw<Small> draw(state);
  const Small mask = static_cast<Small>(covering_mask(rng));
  for (int64_t i = 0; i < count; ++i) {
    Small value;
    if (rng == 0) {
      value = 0;
    } else if (rng == std::numeric_limits<Small>::max()) {
      value = draw.next();
    } else {
      do {
        value = static_cast<Small>(draw.next() & mask);
      } while (value > rng);
    }
    out[i] = std::bit_cast<Out>(static_cast<Small>(off + value));
  }
}

void fill_32(NumpyRandomState& state, uint32_t off, uint32_t rng, uint32_t* out, int64_t count) {
  const uint32_t mask = static_cast<uint32_t>(covering_mask(rng));
  for (int64_t i = 0; i < count; ++i) {
    uint32_t value;
    if (rng == 0) {
      value = 0;
    } else if (rng == 0xFFFFFFFFu) {
      value = state.next_uint32();
    } else {
      do {
        value = state.next_uint32() & mask;
      } while (value > rng);
    }
    out[i] = off + value;
  }
}

void fill_64(NumpyRandomState& state, uint64_t off, uint64_t rng, uint64_t* out, int64_t count) {
  if (rng <= 0xFFFFFFFFull) {
    // numpy uses the 32-bit generator whenever the range fits in 32 bits.
    const uint32_t rng32 = static_cast<uint32_t>(rng);
    const uint32_t mask = static_cast<uint32_t>(covering_mask(rng32));
    for (int64_t i = 0; i < count; ++i) {
      uint32_t value;
      if (rng32 == 0) {
        value = 0;
      } else if (rng32 == 0xFFFFFFFFu) {
        value = state.next_uint32();
      } else {
        do {
          value = state.next_uint32() & mask;
        } while (value > rng32);
      }
      out[i] = off + value;
    }
    return;
  }
  const uint64_t mask = covering_mask(rng);
  for (int64_t i = 0; i < count; ++i) {
    uint64_t value;
    if (rng == std::numeric_limits<uint64_t>::max()) {
      value = state.next_uint64();
    } else {
      do {
        value = state.next_uint64() & mask;
      } while (value > rng);
    }
    out[i] = off + value;
  }
}

void fill_bool(NumpyRandomState& state, bool off, bool rng, bool* out, int64_t count) {
  uint32_t buffer = 0;
  int remaining = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (!rng) {
      out[i] = off;
      continue;
    }
    if (remaining == 0) {
      buffer = state.next_uint32();
      remaining = 31;
    } else {
      buffer >>= 1;
      --remaining;
    }
    out[i] = (buffer & 1u) != 0;
  }
}

template <typename T>
void check_bounds(int64_t low, int64_t high, DType dtype) {
  // Ranges are given as int64; uint64 above int64's max is not expressible and never needed.
  const auto lo_limit = static_cast<long double>(std::numeric_limits<T>::lowest());
  const auto hi_limit = static_cast<long double>(std::numeric_limits<T>::max());
  PARITY_CHECK(static_cast<long double>(low) >= lo_limit, kInvalidArgument, "value range low ", low,
               " is out of bounds for ", dtype_name(dtype));
  PARITY_CHECK(static_cast<long double>(high) <= hi_limit, kInvalidArgument, "value range high ",
               high, " is out of bounds for ", dtype_name(dtype));
}

}  // namespace

double NumpyRandomState::random_sample() {
  const uint64_t a = next_uint32() >> 5;
  const uint64_t b = next_uint32() >> 6;
  return (static_cast<double>(a) * 67108864.0 + static_cast<double>(b)) / 9007199254740992.0;
}

Tensor NumpyRandomState::randint(int64_t low, int64_t high, const Shape& shape, DType dtype) {
  PARITY_CHECK(low <= high, kInvalidArgument, "value range [", low, ", ", high,
               "] is empty (low > high)");
  Tensor out(dtype, shape);
  const int64_t n = out.numel();
  switch (dtype) {
    case DType::kBool:
      check_bounds<bool>(low, high, dtype);
      fill_bool(*this, low != 0, (high - low) != 0, out.data<bool>(), n);
      break;
    case DType::kInt8:
      check_bounds<int8_t>(low, high, dtype);
      fill_small<uint8_t>(*this, static_cast<uint8_t>(low), static_cast<uint8_t>(high - low), out.data<int8_t>(), n);
      break;
    case DType::kUInt8:
      check_bounds<uint8_t>(low, high, dtype);
      fill_small<uint8_t>(*this, static_cast<uint8_t>(low), static_cast<uint8_t>(high - low), out.data<uint8_t>(), n);
      break;
    case DType::kInt16:
      check_bounds<int16_t>(low, high, dtype);
      fill_small<uint16_t>(*this, static_cast<uint16_t>(low), static_cast<uint16_t>(high - low), out.data<int16_t>(), n);
      break;
    case DType::kUInt16:
      check_bounds<uint16_t>(low, high, dtype);
      fill_small<uint16_t>(*this, static_cast<uint16_t>(low), static_cast<uint16_t>(high - low), out.data<uint16_t>(), n);
      break;
    case DType::kInt32:
      check_bounds<int32_t>(low, high, dtype);
      fill_32(*this, static_cast<uint32_t>(low), static_cast<uint32_t>(high - low),
              reinterpret_cast<uint32_t*>(out.data<int32_t>()), n);
      break;
    case DType::kUInt32:
      check_bounds<uint32_t>(low, high, dtype);
      fill_32(*this, static_cast<uint32_t>(low), static_cast<uint32_t>(high - low), out.data<uint32_t>(), n);
      break;
    case DType::kInt64:
      fill_64(*this, static_cast<uint64_t>(low), static_cast<uint64_t>(high) - static_cast<uint64_t>(low),
              reinterpret_cast<uint64_t*>(out.data<int64_t>()), n);
      break;
    case DType::kUInt64:
      PARITY_CHECK(low >= 0, kInvalidArgument, "value range low ", low, " is out of bounds for uint64");
      fill_64(*this, static_cast<uint64_t>(low), static_cast<uint64_t>(high - low), out.data<uint64_t>(), n);
      break;
    default:
      fail(ErrorCode::kUnsupported, "cannot generate random integers of dtype ", dtype_name(dtype));
  }
  return out;
}

Tensor NumpyRandomState::uniform(double low, double high, const Shape& shape, DType dtype) {
  Tensor out(dtype, shape);
  const int64_t n = out.numel();
  const double scale = high - low;
  auto next = [&] { return random_sample() * scale + low; };
  switch (dtype) {
    case DType::kFloat64: {
      double* p = out.data<double>();
      for (int64_t i = 0; i < n; ++i) p[i] = next();
      break;
    }
    case DType::kFloat32: {
      float* p = out.data<float>();
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(next());
      break;
    }
    case DType::kFloat16: {
      Float16* p = out.data<Float16>();
      for (int64_t i = 0; i < n; ++i) p[i] = Float16::from_bits(double_to_half_bits(next()));
      break;
    }
    case DType::kBFloat16: {
      // numpy has no bfloat16; round through float32 like ml_dtypes does.
      BFloat16* p = out.data<BFloat16>();
      for (int64_t i = 0; i < n; ++i) p[i] = BFloat16(static_cast<float>(next()));
      break;
    }
    default:
      fail(ErrorCode::kUnsupported, "cannot generate random floating-point values of dtype ",
           dtype_name(dtype));
  }
  return out;
}

uint16_t double_to_half_bits(double value) {
  const uint64_t bits = std::bit_cast<uint64_t>(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 48) & 0x8000u);
  const uint64_t magnitude = bits & 0x7fffffffffffffffull;
  if (magnitude >= 0x7ff0000000000000ull)  // inf or NaN
    return static_cast<uint16_t>(sign | (magnitude == 0x7ff0000000000000ull ? 0x7c00u : 0x7e00u));
  const int biased = static_cast<int>(magnitude >> 52);
  if (biased == 0) return sign;  // double subnormals are far below half's range
  const int exponent = biased - 1023;
  if (exponent > 15) return static_cast<uint16_t>(sign | 0x7c00u);
  const uint64_t mantissa = (magnitude & ((1ull << 52) - 1)) | (1ull << 52);
  // Quantum of the result: 2^(e-10) for normals, 2^-24 for subnormals.
  const int shift = 42 + std::max(exponent, -14) - exponent;
  if (shift > 63) return sign;
  uint64_t significand = mantissa >> shift;
  const uint64_t rest = mantissa & ((1ull << shift) - 1);
  const uint64_t halfway = 1ull << (shift - 1);
  if (rest > halfway || (rest == halfway && (significand & 1u))) ++significand;
  uint64_t half;
  if (exponent >= -14)
    half = (static_cast<uint64_t>(exponent + 14) << 10) + significand;  // a carry bumps the exponent
  else
    half = significand;
  if (half >= 0x7c00u) half = 0x7c00u;
  return static_cast<uint16_t>(sign | half);
}

}  // namespace parity
