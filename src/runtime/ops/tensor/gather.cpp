// Spec: https://onnx.ai/onnx/operators/onnx__Gather.html, onnx__GatherElements.html,
//       onnx__GatherND.html
// Gather, GatherElements, GatherND.
#include <algorithm>

#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime {
namespace {

using tensor_ops::checked_index;
using tensor_ops::elements;
using ops::normalize_axis;
using tensor_ops::visit_storage_type;

class GatherKernel final : public Kernel {
 public:
  explicit GatherKernel(const KernelInit& init) : axis_(init.attr_int("axis", 0)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices_t = ctx.input(1);
    if (data.rank() == 0) ctx.fail("data must have rank >= 1");
    const int64_t axis = normalize_axis(axis_, data.rank(), ctx);
    std::vector<int64_t> indices = ops::read_int_values(ctx, indices_t, "indices");
    const int64_t dim = data.shape()[axis];
    for (int64_t& i : indices) i = checked_index(i, dim, ctx, axis);

    Shape out_shape(data.shape().begin(), data.shape().begin() + axis);
    out_shape.insert(out_shape.end(), indices_t.shape().begin(), indices_t.shape().end());
    out_shape.insert(out_shape.end(), data.shape().begin() + axis + 1, data.shape().end());
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= data.shape()[d];
    int64_t inner = 1;
    for (int64_t d = axis + 1; d < data.rank(); ++d) inner *= data.shape()[d];

    Tensor& out = ctx.allocate_output(0, data.dtype(), out_shape);
    visit_storage_type(data.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      const S* src = elements<S>(data);
      S* dst = elements<S>(out);
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t index : indices) {
          const S* block = src + (o * dim + index) * inner;
          dst = std::copy(block, block + inner, dst);
        }
      }
    });
  }

 private:
  int64_t axis_;
};

class GatherElementsKernel final : public Kernel {
 public:
  explicit GatherElementsKernel(const KernelInit& init) : axis_(init.attr_int("axis", 0)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices_t = ctx.input(1);
    const int64_t rank = data.rank();
    if (rank == 0) ctx.fail("data must have rank >= 1");
    if (indices_t.rank() != rank)
      ctx.fail("indices ", shape_to_string(indices_t.shape()), " must have the rank of data ",
               shape_to_string(data.shape()));
    const int64_t axis = normalize_axis(axis_, rank, ctx);
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && indices_t.shape()[d] > data.shape()[d])
        ctx.fail("indices ", shape_to_string(indices_t.shape()), " exceed data ", shape_to_string(data.shape()),
                 " on axis ", d);
    std::vector<int64_t> indices = ops::read_int_values(ctx, indices_t, "indices");
    const std::vector<int64_t> strides = shape_strides(data.shape());
    const Shape& shape = indices_t.shape();
    const int64_t dim = data.shape()[axis];
    for (int64_t& i : indices) i = checked_index(i, dim, ctx, axis);

    Tensor& out = ctx.allocate_output(0, data.dtype(), shape);
    visit_storage_type(data.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      const S* src = elements<S>(data);
      S* dst = elements<S>(out);
      std::vector<int64_t> walk_strides = strides;
      walk_strides[axis] = 0;  // the axis coordinate comes from the index
      tensor_ops::for_each_offset(shape, walk_strides, [&](int64_t i, int64_t base) {
        dst[i] = src[base + indices[i] * strides[axis]];
      });
    });
  }

 private:
  int64_t axis_;
};

class GatherNDKernel final : public Kernel {
 public:
  explicit GatherNDKernel(const KernelInit& init) : batch_dims_(init.attr_int("batch_dims", 0)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices_t = ctx.input(1);
    const int64_t r = data.rank();
    const int64_t q = indices_t.rank();
    const int64_t b = batch_dims_;
    if (r < 1 || q < 1) ctx.fail("data and indices must have rank >= 1");
    if (b < 0 || b >= std::min(r, q)) ctx.fail("batch_dims ", b, " must be in [0, min(rank(data), rank(indices)))");
    for (int64_t d = 0; d < b; ++d)
      if (data.shape()[d] != indices_t.shape()[d])
        ctx.fail("batch dimension ", d, " differs: data ", shape_to_string(data.shape()), ", indices ",
                 shape_to_string(indices_t.shape()));
    const int64_t k = indices_t.shape().back();
    if (k < 0 || k > r - b)
      ctx.fail("the last dimension of indices (", k, ") must be at most rank(data) - batch_dims = ", r - b);
    std::vector<int64_t> indices = ops::read_int_values(ctx, indices_t, "indices");
    for (size_t i = 0; i < indices.size(); ++i) {
      const int64_t axis = b + static_cast<int64_t>(i) % k;
      indices[i] = checked_index(indices[i], data.shape()[axis], ctx, axis);
    }

    Shape out_shape(indices_t.shape().begin(), indices_t.shape().end() - 1);
    out_shape.insert(out_shape.end(), data.shape().begin() + b + k, data.shape().end());
    const std::vector<int64_t> strides = shape_strides(data.shape());
    int64_t batches = 1;
    for (int64_t d = 0; d < b; ++d) batches *= data.shape()[d];
    const int64_t batch_stride = b > 0 ? strides[b - 1] : 0;  // data elements per batch entry
    int64_t slice = 1;
    for (int64_t d = b + k; d < r; ++d) slice *= data.shape()[d];
    const int64_t tuples = shape_numel(Shape(indices_t.shape().begin(), indices_t.shape().end() - 1));

    Tensor& out = ctx.allocate_output(0, data.dtype(), out_shape);
    if (out.numel() == 0) return;
    visit_storage_type(data.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      const S* src = elements<S>(data);
      S* dst = elements<S>(out);
      for (int64_t t = 0; t < tuples; ++t) {
        int64_t offset = (t / (tuples / batches)) * batch_stride;
        for (int64_t j = 0; j < k; ++j)
          offset += indices[t * k + j] * strides[b + j];
        dst = std::copy(src + offset, src + offset + slice, dst);
      }
    });
  }

 private:
  int64_t batch_dims_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Gather", 1, GatherKernel);
PARITY_REGISTER_KERNEL("", "GatherElements", 11, GatherElementsKernel);
PARITY_REGISTER_KERNEL("", "GatherND", (11, 12), GatherNDKernel);

}  // namespace parity::runtime
