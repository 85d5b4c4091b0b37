// Numpy-style (multidirectional) broadcasting shared by elementwise kernels.
// Spec: https://github.com/onnx/onnx/blob/main/docs/Broadcasting.md
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/tensor.h"
#include "runtime/kernel.h"

namespace parity::runtime::ops {

/// Broadcast shape of all `shapes` (right-aligned, size-1 dims stretch); nullopt if incompatible.
std::optional<Shape> try_broadcast_shapes(std::span<const Shape> shapes);

/// Like try_broadcast_shapes, but an incompatibility fails the node (kRuntime, names the shapes).
Shape broadcast_shapes(const KernelContext& ctx, std::span<const Shape> shapes);
inline Shape broadcast_shapes(const KernelContext& ctx, std::initializer_list<Shape> shapes) {
  return broadcast_shapes(ctx, std::span<const Shape>(shapes.begin(), shapes.size()));
}

/// Element strides of `in_shape` viewed as `out_shape` (rank of out_shape; 0 for broadcast dims).
/// Requires in_shape to be broadcastable to out_shape.
std::vector<int64_t> broadcast_strides(const Shape& in_shape, const Shape& out_shape);

/// True when in_shape broadcasts to out_shape without changing out_shape (unidirectional).
bool broadcasts_to(const Shape& in_shape, const Shape& out_shape);

/// Walks out_shape in row-major order, calling fn(out_index, offsets) where offsets[k] is the
/// flat element offset into input k (whose shape broadcasts to out_shape). Offsets are updated
/// incrementally, so the cost per element is O(1) amortized.
template <size_t N, typename Fn>
void for_each_broadcast(const Shape& out_shape, const std::array<Shape, N>& in_shapes, Fn&& fn) {
  const int64_t total = shape_numel(out_shape);
  if (total == 0) return;
  const size_t rank = out_shape.size();
  std::array<std::vector<int64_t>, N> strides;
  for (size_t k = 0; k < N; ++k) strides[k] = broadcast_strides(in_shapes[k], out_shape);
  std::array<int64_t, N> offsets{};
  if (rank == 0) {
    fn(int64_t{0}, offsets);
    return;
  }
  std::vector<int64_t> counter(rank, 0);
  const int64_t inner = out_shape[rank - 1];
  std::array<int64_t, N> inner_stride;
  for (size_t k = 0; k < N; ++k) inner_stride[k] = strides[k][rank - 1];
  int64_t out_index = 0;
  while (out_index < total) {
    std::array<int64_t, N> row = offsets;
    for (int64_t j = 0; j < inner; ++j) {
      fn(out_index++, row);
      for (size_t k = 0; k < N; ++k) row[k] += inner_stride[k];
    }
    // Advance the outer dimensions (odometer), rewinding offsets of dimensions that wrap.
    for (int64_t d = static_cast<int64_t>(rank) - 2; d >= 0; --d) {
      if (++counter[d] < out_shape[d]) {
        for (size_t k = 0; k < N; ++k) offsets[k] += strides[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k) offsets[k] -= strides[k][d] * (out_shape[d] - 1);
      counter[d] = 0;
    }
  }
}

}  // namespace parity::runtime::ops
