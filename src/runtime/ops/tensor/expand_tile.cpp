// Spec: https://onnx.ai/onnx/operators/onnx__Expand.html, onnx__Tile.html
// Expand (broadcast to a shape) and Tile (repeat).
#include "core/allocation_limit.h"
#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime {
namespace {

using tensor_ops::elements;
using tensor_ops::visit_storage_type;

class ExpandKernel final : public Kernel {
 public:
  explicit ExpandKernel(const KernelInit&) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    const Tensor& shape_t = ctx.input(1);
    if (shape_t.rank() != 1) ctx.fail("shape must be a 1-D tensor, got shape ", shape_to_string(shape_t.shape()));
    const Shape requested = ops::read_int_values(ctx, shape_t, "shape");
    for (int64_t d : requested)
      if (d < 0) ctx.fail("shape ", shape_to_string(requested), " has a negative dimension");
    const Shape out_shape = ops::broadcast_shapes(ctx, {data.shape(), requested});
    const size_t rank = out_shape.size();
    const size_t lead = rank - data.shape().size();
    const std::vector<int64_t> in_strides = shape_strides(data.shape());
    std::vector<int64_t> src_strides(rank, 0);
    for (size_t d = lead; d < rank; ++d)
      src_strides[d] = data.shape()[d - lead] == 1 ? 0 : in_strides[d - lead];
    Tensor& out = ctx.allocate_output(0, data.dtype(), out_shape);
    visit_storage_type(data.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      tensor_ops::strided_copy(elements<S>(data), 0, src_strides, out_shape, elements<S>(out));
    });
  }
};

class TileKernel final : public Kernel {
 public:
  explicit TileKernel(const KernelInit&) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    const std::vector<int64_t> repeats = ops::read_int_values(ctx, ctx.input(1), "repeats");
    if (static_cast<int64_t>(repeats.size()) != data.rank())
      ctx.fail("repeats has ", repeats.size(), " entries for an input of rank ", data.rank());
    std::vector<std::vector<int64_t>> maps(repeats.size());
    Shape out_shape(repeats.size());
    for (size_t d = 0; d < repeats.size(); ++d) {
      if (repeats[d] < 0) ctx.fail("repeats ", shape_to_string(repeats), " has a negative entry");
      const int64_t dim = data.shape()[d];
      if (__builtin_mul_overflow(dim, repeats[d], &out_shape[d]))
        ctx.fail("repeats ", shape_to_string(repeats), " make axis ", d, " too large to address");
      checked_tensor_bytes(DType::kInt64, Shape{out_shape[d]});  // the axis's index map
      maps[d].resize(static_cast<size_t>(out_shape[d]));
      for (int64_t o = 0; o < out_shape[d]; ++o) maps[d][o] = o % dim;
    }
    Tensor& out = ctx.allocate_output(0, data.dtype(), out_shape);
    if (out.numel() == 0) return;
    visit_storage_type(data.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      tensor_ops::axis_map_copy(elements<S>(data), data.shape(), maps, S{}, elements<S>(out));
    });
  }
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Expand", 8, ExpandKernel);
PARITY_REGISTER_KERNEL("", "Tile", (1, 6), TileKernel);

}  // namespace parity::runtime
