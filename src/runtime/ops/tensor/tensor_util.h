// Helpers shared by the tensor-family kernels (layout ops): element storage types that work for
// every dtype (strings included) and strided / index-mapped copies. Axis and int-tensor helpers
// come from runtime/ops/common.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"
#include "runtime/kernel.h"
#include "runtime/ops/common/axis.h"
#include "runtime/ops/common/broadcast.h"

namespace parity::runtime::tensor_ops {

/// Storage for 16-byte elements (complex128); layout ops only move elements, never read them.
struct Bytes16 {
  uint64_t lo = 0;
  uint64_t hi = 0;
};

/// Calls fn(TypeTag<S>{}) with a type that moves elements of `dtype` correctly: std::string for
/// string tensors, an unsigned integer (or Bytes16) of the element's size for everything else.
/// Layout ops are templated on S so one instantiation serves all dtypes of a size.
template <typename Fn>
decltype(auto) visit_storage_type(DType dtype, Fn&& fn) {
  if (dtype == DType::kString) return fn(TypeTag<std::string>{});
  switch (dtype_size(dtype)) {
    case 1: return fn(TypeTag<uint8_t>{});
    case 2: return fn(TypeTag<uint16_t>{});
    case 4: return fn(TypeTag<uint32_t>{});
    case 8: return fn(TypeTag<uint64_t>{});
    case 16: return fn(TypeTag<Bytes16>{});
    default: throw_unsupported_dtype(dtype, "layout operation");
  }
}

/// Element pointer of a tensor viewed as storage type S (see visit_storage_type).
template <typename S>
const S* elements(const Tensor& t) {
  return static_cast<const S*>(t.raw_data());
}
template <typename S>
S* elements(Tensor& t) {
  return static_cast<S*>(t.raw_data());
}

/// An index into an axis of size dim; negative values count from the end. Out of range fails the
/// node.
inline int64_t checked_index(int64_t index, int64_t dim, const KernelContext& ctx, int64_t axis) {
  if (index < -dim || index >= dim) ctx.fail("index ", index, " is out of range for axis ", axis, " of size ", dim);
  return index < 0 ? index + dim : index;
}

/// Walks `shape` in row-major order calling fn(flat_index, offset) with
/// offset = sum(coord[d] * strides[d]) maintained incrementally (strides may belong to another
/// tensor of the same rank, e.g. the data tensor of GatherElements walked over the indices shape).
template <typename Fn>
void for_each_offset(const Shape& shape, const std::vector<int64_t>& strides, Fn&& fn) {
  const int64_t n = shape_numel(shape);
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> coord(static_cast<size_t>(rank), 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < n; ++i) {
    fn(i, offset);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++coord[d] < shape[d]) {
        offset += strides[d];
        break;
      }
      offset -= strides[d] * (shape[d] - 1);
      coord[d] = 0;
    }
  }
}

/// Copies the elements visited by walking `out_shape` in row-major order, where output index i
/// along dim d moves the source by src_strides[d] elements (0 = broadcast, negative = reversed),
/// starting at src_offset.
template <typename S>
void strided_copy(const S* src, int64_t src_offset, const std::vector<int64_t>& src_strides,
                  const Shape& out_shape, S* dst) {
  const int64_t n = shape_numel(out_shape);
  if (n == 0) return;
  const int64_t rank = static_cast<int64_t>(out_shape.size());
  if (rank == 0) {
    dst[0] = src[src_offset];
    return;
  }
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  const int64_t inner = out_shape.back();
  const int64_t inner_stride = src_strides.back();
  int64_t s = src_offset;
  for (int64_t o = 0; o < n; o += inner) {
    const S* p = src + s;
    S* q = dst + o;
    if (inner_stride == 1 && !std::is_same_v<S, std::string>) {
      std::memcpy(static_cast<void*>(q), static_cast<const void*>(p), sizeof(S) * static_cast<size_t>(inner));
    } else {
      for (int64_t j = 0; j < inner; ++j) q[j] = p[j * inner_stride];
    }
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++index[d] < out_shape[d]) {
        s += src_strides[d];
        break;
      }
      s -= src_strides[d] * (out_shape[d] - 1);
      index[d] = 0;
    }
  }
}

/// Builds the output by mapping each output index, per axis, to a source index: out element at
/// (i0, i1, ...) = src[maps[0][i0], maps[1][i1], ...], or `fill` when any map entry is -1.
/// Output dim d has maps[d].size() entries. Used by Pad and Tile.
template <typename S>
void axis_map_copy(const S* src, const Shape& src_shape, const std::vector<std::vector<int64_t>>& maps,
                   const S& fill, S* dst) {
  const size_t rank = maps.size();
  if (rank == 0) {
    dst[0] = src[0];
    return;
  }
  const std::vector<int64_t> src_strides = shape_strides(src_shape);
  std::vector<int64_t> out_block(rank + 1, 1);  // elements per index of dim d (out_block[d+1])
  for (size_t d = rank; d-- > 0;) out_block[d] = out_block[d + 1] * static_cast<int64_t>(maps[d].size());
  int64_t written = 0;
  auto visit = [&](auto& self, size_t d, int64_t src_offset) -> void {
    const std::vector<int64_t>& map = maps[d];
    if (d + 1 == rank) {
      for (int64_t m : map) dst[written++] = m < 0 ? fill : src[src_offset + m];
      return;
    }
    for (int64_t m : map) {
      if (m < 0) {
        for (int64_t k = 0; k < out_block[d + 1]; ++k) dst[written++] = fill;
      } else {
        self(self, d + 1, src_offset + m * src_strides[d]);
      }
    }
  };
  if (out_block[0] > 0) visit(visit, 0, 0);
}

}  // namespace parity::runtime::tensor_ops
