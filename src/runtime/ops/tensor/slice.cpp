// Spec: https://onnx.ai/onnx/operators/onnx__Slice.html
// Slice.
// Version 1 takes starts/ends/axes as attributes; 10+ takes them (and steps) as inputs.
#include <algorithm>
#include <limits>

#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime {
namespace {


class SliceKernel final : public Kernel {
 public:
  explicit SliceKernel(const KernelInit& init) : from_attrs_(init.opset() < 10) {
    if (from_attrs_) {
      starts_ = init.attr_ints("starts");
      ends_ = init.attr_ints("ends");
      if (init.has_attr("axes")) axes_ = init.attr_ints("axes");
    }
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    const int64_t rank = data.rank();
    std::vector<int64_t> starts = starts_;
    std::vector<int64_t> ends = ends_;
    std::optional<std::vector<int64_t>> axes = axes_;
    std::vector<int64_t> steps;
    if (!from_attrs_) {
      starts = ops::read_int_values(ctx, ctx.input(1), "starts");
      ends = ops::read_int_values(ctx, ctx.input(2), "ends");
      if (ctx.has_input(3)) axes = ops::read_int_values(ctx, ctx.input(3), "axes");
      if (ctx.has_input(4)) steps = ops::read_int_values(ctx, ctx.input(4), "steps");
    }
    if (starts.size() != ends.size())
      ctx.fail("starts has ", starts.size(), " entries but ends has ", ends.size());
    if (!axes) {
      axes.emplace();
      for (size_t i = 0; i < starts.size(); ++i) axes->push_back(static_cast<int64_t>(i));
    }
    if (axes->size() != starts.size())
      ctx.fail("axes has ", axes->size(), " entries but starts has ", starts.size());
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (steps.size() != starts.size())
      ctx.fail("steps has ", steps.size(), " entries but starts has ", starts.size());
    const std::vector<int64_t> norm_axes = ops::normalize_axes(*axes, rank, ctx);

    // Per output dim: first source index, count and step.
    Shape out_shape = data.shape();
    std::vector<int64_t> first(static_cast<size_t>(rank), 0);
    std::vector<int64_t> step_of(static_cast<size_t>(rank), 1);
    for (size_t i = 0; i < norm_axes.size(); ++i) {
      const int64_t axis = norm_axes[i];
      const int64_t dim = data.shape()[axis];
      const int64_t step = steps[i];
      if (step == 0) ctx.fail("steps must not be 0 (axis ", axis, ")");
      int64_t start = starts[i];
      int64_t end = ends[i];
      if (start < 0) start += dim;
      if (end < 0) end += dim;
      int64_t count = 0;
      // Counts are computed as (distance - 1) / |step| + 1 so huge steps cannot overflow.
      if (step > 0) {
        start = std::clamp<int64_t>(start, 0, dim);
        end = std::clamp<int64_t>(end, 0, dim);
        if (end > start) count = (end - start - 1) / step + 1;
      } else if (dim > 0) {
        start = std::clamp<int64_t>(start, 0, dim - 1);
        end = std::clamp<int64_t>(end, -1, dim - 1);
        if (start > end)
          count = step == std::numeric_limits<int64_t>::min() ? 1 : (start - end - 1) / (-step) + 1;
      }
      out_shape[axis] = count;
      first[axis] = count > 0 ? start : 0;
      step_of[axis] = count > 1 ? step : 0;  // a single element never moves, whatever the step
    }

    const std::vector<int64_t> strides = shape_strides(data.shape());
    int64_t offset = 0;
    std::vector<int64_t> src_strides(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) {
      offset += first[d] * strides[d];
      src_strides[d] = step_of[d] * strides[d];
    }
    Tensor& out = ctx.allocate_output(0, data.dtype(), out_shape);
    tensor_ops::visit_storage_type(data.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      tensor_ops::strided_copy(tensor_ops::elements<S>(data), offset, src_strides, out_shape,
                               tensor_ops::elements<S>(out));
    });
  }

 private:
  bool from_attrs_;
  std::vector<int64_t> starts_;
  std::vector<int64_t> ends_;
  std::optional<std::vector<int64_t>> axes_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Slice", (1, 10), SliceKernel);

}  // namespace parity::runtime
