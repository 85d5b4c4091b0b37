#include "runtime/tensor_util.h"

#include <algorithm>

namespace parity::runtime {

namespace {

int64_t prod(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= s[i];
  return p;
}

/// Copies `count` elements from src[src_off] to dst[dst_off] (element offsets).
void copy_elements(const Tensor& src, int64_t src_off, Tensor& dst, int64_t dst_off, int64_t count) {
  if (count <= 0) return;
  visit_dtype(src.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* s = src.data<T>() + src_off;
    std::copy(s, s + count, dst.data<T>() + dst_off);
  });
}

}  // namespace

Tensor concat_tensors(const std::vector<Tensor>& items, int64_t axis, const std::string& what,
                      const ErrorContext& where) {
  PARITY_CHECK_AT(!items.empty(), where, kRuntime, what, ": nothing to concatenate");
  const Tensor& first = items.front();
  const int64_t rank = first.rank();
  if (axis < 0) axis += rank;
  PARITY_CHECK_AT(axis >= 0 && axis < rank, where, kRuntime, what, ": axis out of range for rank ", rank);
  Shape out_shape = first.shape();
  out_shape[axis] = 0;
  for (const auto& t : items) {
    PARITY_CHECK_AT(t.dtype() == first.dtype(), where, kRuntime, what, ": cannot concatenate ", dtype_name(t.dtype()), " with ",
                 dtype_name(first.dtype()));
    PARITY_CHECK_AT(t.rank() == rank, where, kRuntime, what, ": cannot concatenate shapes ", shape_to_string(t.shape()), " and ",
                 shape_to_string(first.shape()));
    for (int64_t d = 0; d < rank; ++d)
      PARITY_CHECK_AT(d == axis || t.shape()[d] == first.shape()[d], where, kRuntime, what, ": cannot concatenate shapes ",
                   shape_to_string(t.shape()), " and ", shape_to_string(first.shape()), " along axis ", axis);
    out_shape[axis] += t.shape()[axis];
  }
  Tensor out(first.dtype(), out_shape);
  const int64_t outer = prod(out_shape, 0, axis);
  const int64_t out_block = prod(out_shape, axis, out_shape.size());
  int64_t offset = 0;
  for (const auto& t : items) {
    const int64_t block = prod(t.shape(), axis, t.shape().size());
    for (int64_t o = 0; o < outer; ++o) copy_elements(t, o * block, out, o * out_block + offset, block);
    offset += block;
  }
  return out;
}

Tensor stack_tensors(const std::vector<Tensor>& items, int64_t axis, const std::string& what,
                     const ErrorContext& where) {
  PARITY_CHECK_AT(!items.empty(), where, kRuntime, what, ": nothing to stack");
  std::vector<Tensor> expanded;
  for (const auto& t : items) {
    PARITY_CHECK_AT(t.shape() == items.front().shape(), where, kRuntime, what, ": cannot stack shapes ",
                 shape_to_string(t.shape()), " and ", shape_to_string(items.front().shape()));
    Shape s = t.shape();
    s.insert(s.begin() + axis, 1);
    expanded.push_back(t.reshaped(s));
  }
  return concat_tensors(expanded, axis, what, where);
}

Tensor slice_axis(const Tensor& t, int64_t axis, int64_t start, int64_t length) {
  Shape out_shape = t.shape();
  out_shape[axis] = length;
  Tensor out(t.dtype(), out_shape);
  const int64_t outer = prod(t.shape(), 0, axis);
  const int64_t inner = prod(t.shape(), axis + 1, t.shape().size());
  const int64_t in_block = t.shape()[axis] * inner;
  for (int64_t o = 0; o < outer; ++o) copy_elements(t, o * in_block + start * inner, out, o * length * inner, length * inner);
  return out;
}

Tensor take_axis(const Tensor& t, int64_t axis, int64_t index) {
  Tensor s = slice_axis(t, axis, index, 1);
  Shape shape = t.shape();
  shape.erase(shape.begin() + axis);
  return s.reshaped(shape);
}

}  // namespace parity::runtime
