// numpy's legacy RandomState, reproduced bit for bit so that parity's random inputs equal
// Polygraphy's for the same seed (Polygraphy draws with numpy.random.RandomState(seed + i)).
#pragma once

#include <cstdint>
#include <random>

#include "core/tensor.h"

namespace parity {

/// MT19937 seeded the way numpy's RandomState(int) seeds it (init_genrand, which is also what
/// std::mt19937's integer constructor does), with numpy's derived draws on top.
class NumpyRandomState {
 public:
  explicit NumpyRandomState(uint32_t seed) : engine_(seed) {}

  uint32_t next_uint32() { return static_cast<uint32_t>(engine_()); }
  /// numpy's 64-bit draw: the first 32-bit word is the high half.
  uint64_t next_uint64() {
    const uint64_t high = next_uint32();
    return (high << 32) | next_uint32();
  }
  /// random_sample(): a 53-bit double in [0, 1) built from two 32-bit draws.
  double random_sample();

  /// randint(low, high + 1, size=shape, dtype=dtype): integers in [low, high] (both inclusive)
  /// with numpy's legacy masked rejection sampling, whose draw width depends on the dtype
  /// (8/16-bit values come from buffered 32-bit draws, bools from single bits).
  /// Throws kInvalidArgument when the range is empty or does not fit the dtype.
  Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype);

  /// (random_sample(shape) * (high - low) + low).astype(dtype) for floating dtypes, rounding the
  /// float64 values directly to the target type as numpy does.
  Tensor uniform(double low, double high, const Shape& shape, DType dtype);

 private:
  std::mt19937 engine_;
};

/// Rounds a double straight to IEEE binary16 bits (round to nearest even), as numpy's
/// float64 -> float16 cast does; going through float32 first could round twice.
uint16_t double_to_half_bits(double value);

}  // namespace parity
