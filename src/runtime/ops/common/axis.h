// Axis normalization and small shape utilities shared by kernels.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "runtime/kernel.h"

namespace parity::runtime::ops {

/// Maps a possibly negative axis into [0, rank). Out of range fails through `where`
/// (a KernelInit → kInvalidModel, or a KernelContext → kRuntime), naming the axis and rank.
template <typename Where>
int64_t normalize_axis(int64_t axis, int64_t rank, const Where& where) {
  if (axis < -rank || axis >= rank) where.fail("axis ", axis, " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

/// Normalizes each axis (see normalize_axis); duplicates fail.
template <typename Where>
std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank, const Where& where) {
  std::vector<int64_t> out;
  out.reserve(axes.size());
  std::vector<bool> seen(static_cast<size_t>(rank > 0 ? rank : 0), false);
  for (int64_t a : axes) {
    const int64_t n = normalize_axis(a, rank, where);
    if (seen[n]) where.fail("axis ", a, " is repeated");
    seen[n] = true;
    out.push_back(n);
  }
  return out;
}

/// Product of dims [begin, end) of shape.
int64_t shape_product(const Shape& shape, int64_t begin, int64_t end);
/// Product of the dims before axis (the "outer" size).
inline int64_t size_to_axis(const Shape& shape, int64_t axis) { return shape_product(shape, 0, axis); }
/// Product of the dims from axis on (the "inner" size, axis included).
inline int64_t size_from_axis(const Shape& shape, int64_t axis) {
  return shape_product(shape, axis, static_cast<int64_t>(shape.size()));
}

/// Reads an integer tensor (int8..int64, uint8..uint64) of any rank as int64 values.
/// Other dtypes fail the node (`what` names the input in the message, e.g. "axes").
std::vector<int64_t> read_int_values(const KernelContext& ctx, const Tensor& tensor, const char* what);
/// Reads a tensor holding exactly one integer.
int64_t read_int_scalar(const KernelContext& ctx, const Tensor& tensor, const char* what);
/// Reads a tensor holding exactly one numeric value as double (any numeric dtype).
double read_double_scalar(const KernelContext& ctx, const Tensor& tensor, const char* what);

/// Plan-time versions (for constant inputs / attribute tensors); failures are kInvalidModel.
std::vector<int64_t> read_int_values(const KernelInit& init, const Tensor& tensor, const char* what);

}  // namespace parity::runtime::ops
