// Channels-last hand-off between optimized kernels: a producer may write its output in
// channels-last order (NHWC for a 4-D tensor; the tensor keeps its NCHW shape) when every node
// that reads that value agrees to read it so. Consecutive oneDNN convolutions then skip the two
// layout conversions between them. The planner pairs producers and readers only in fused plans,
// so every value a hook or "mark all" sees is in the ONNX layout; a graph output, or a value a
// subgraph captures, is never handed off.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
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
  /// Whether writing channels-last makes this kernel change the layout itself (it reads NCHW;
  /// BatchNormalization reading a Concat's shared buffer): the planner then hands its output off
  /// only to readers that prefer channels-last, which would otherwise convert it themselves.
  virtual bool converts_to_channels_last() const { return false; }
  /// Whether reading input `input` channels-last spares this kernel a layout conversion of its
  /// own (oneDNN convolutions reorder an NCHW input into the channels-last order they compute in).
  virtual bool prefers_channels_last(size_t /*input*/) const { return false; }
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

/// A copy of `t` (NCHW-style shape, rank >= 2, fixed-size dtype) with its data moved between NCHW
/// and channels-last order: the slow paths of kernels that pass channels-last values through.
inline Tensor change_channel_layout(const Tensor& t, bool to_channels_last) {
  Tensor out = Tensor::uninitialized(t.dtype(), t.shape());
  const int64_t n = t.dim(0), c = t.dim(1), plane = c == 0 || n == 0 ? 0 : t.numel() / (n * c);
  const size_t elem = dtype_size(t.dtype());
  const auto* src = static_cast<const std::byte*>(t.raw_data());
  auto* dst = static_cast<std::byte*>(out.raw_data());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p) {
        const int64_t nchw = (b * c + ch) * plane + p, nhwc = (b * plane + p) * c + ch;
        const int64_t from = to_channels_last ? nchw : nhwc, to = to_channels_last ? nhwc : nchw;
        std::memcpy(dst + to * elem, src + from * elem, elem);
      }
  return out;
}

}  // namespace parity::runtime
