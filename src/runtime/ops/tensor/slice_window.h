// Slice's parameters resolved against an input shape, shared by the reference kernel (slice.cpp)
// and the optimized one (slice_fast.cpp) so both read, clamp and reject parameters identically.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/tensor.h"
#include "runtime/kernel.h"

namespace parity::runtime::tensor_ops {

/// Slice-1's attributes (from opset 10 on the same values come from inputs 1-4).
struct SliceAttrs {
  bool from_attrs = false;
  std::vector<int64_t> starts, ends;
  std::optional<std::vector<int64_t>> axes;
  static SliceAttrs parse(const KernelInit& init);
};

/// What a Slice reads: per dim, the output size, the first source index and the step between
/// source indices (0 where at most one element is taken, whatever the step).
struct SliceWindow {
  Shape out_shape;
  std::vector<int64_t> first, step;
  /// Flat source offset of the first element and the source stride per output dim.
  int64_t source_offset(const Shape& in_shape) const;
  std::vector<int64_t> source_strides(const Shape& in_shape) const;
};

/// Resolves the node's starts/ends/axes/steps against `in_shape`; fails on bad parameters.
SliceWindow resolve_slice_window(const SliceAttrs& attrs, const Shape& in_shape, const KernelContext& ctx);

}  // namespace parity::runtime::tensor_ops
