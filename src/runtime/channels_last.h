// Channels-last hand-off between optimized kernels: a producer may write its output in
// channels-last order (NHWC for a 4-D tensor; the tensor keeps its NCHW shape) when every node
// that reads that value agrees to read it so. Consecutive oneDNN convolutions then skip the two
// layout conversions between them. The planner pairs producers and readers only in fused plans,
// so every value a hook or "mark all" sees is in the ONNX layout; a graph output, or a value a
// subgraph captures, is never handed off.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace parity::runtime {

class ChannelsLastKernel {
 public:
  virtual ~ChannelsLastKernel() = default;
  /// Whether this kernel can write its (single) output in channels-last order.
  virtual bool can_write_channels_last() const = 0;
  virtual void write_channels_last() = 0;
  /// Whether this kernel can read input `input` in channels-last order.
  virtual bool can_read_channels_last(size_t input) const = 0;
  virtual void read_channels_last(size_t input) = 0;
  /// Whether this kernel only moves data between layouts it shares with its neighbours (Concat):
  /// the planner then hands it channels-last inputs only where its own output is handed off too,
  /// so the layout conversion is not merely moved into this kernel.
  virtual bool passes_layout_through() const { return false; }
};

/// Strides of a channels-last buffer holding a tensor of NCHW-style `shape` (rank >= 3).
inline std::vector<int64_t> channels_last_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  int64_t step = shape[1];
  for (size_t d = shape.size() - 1; d >= 2; --d) {
    strides[d] = step;
    step *= shape[d];
  }
  strides[0] = step;
  return strides;
}

}  // namespace parity::runtime
