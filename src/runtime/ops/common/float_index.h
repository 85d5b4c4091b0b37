// Kernels turn floats computed from a model's inputs into positions and sizes: sampling
// coordinates (GridSample, DeformConv, RoiAlign, Resize) and lengths (Resize scales, Range,
// OneHot depth). Converting a NaN, infinite or huge double to an integer is undefined behaviour;
// these helpers make it a position outside every tensor, or let the kernel fail with a message.
#pragma once

#include <cstdint>

namespace parity::runtime {

/// A position beyond every tensor; adding a kernel's small tap offsets to it cannot overflow.
inline constexpr int64_t kFarOutsideIndex = int64_t{1} << 53;

/// `coordinate` (already floored or rounded by the caller) as an element position. NaN and
/// values beyond +-2^53 become -2^53 or 2^53, which every bounds check rejects.
inline int64_t sample_index(double coordinate) {
  if (!(coordinate >= -static_cast<double>(kFarOutsideIndex))) return -kFarOutsideIndex;  // NaN too
  if (coordinate > static_cast<double>(kFarOutsideIndex)) return kFarOutsideIndex;
  return static_cast<int64_t>(coordinate);
}

/// True when `value` converts to int64_t without overflow (false for NaN and infinities).
inline bool fits_int64(double value) { return value >= -0x1p63 && value < 0x1p63; }

}  // namespace parity::runtime
