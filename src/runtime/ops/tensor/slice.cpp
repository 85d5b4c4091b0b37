// Spec: https://onnx.ai/onnx/operators/onnx__Slice.html
// Slice.
// Version 1 takes starts/ends/axes as attributes; 10+ takes them (and steps) as inputs.
#include <algorithm>
#include <limits>

#include "runtime/ops/tensor/slice_window.h"
#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime {

namespace tensor_ops {

SliceAttrs SliceAttrs::parse(const KernelInit& init) {
  SliceAttrs attrs;
  attrs.from_attrs = init.opset() < 10;
  if (attrs.from_attrs) {
    attrs.starts = init.attr_ints("starts");
    attrs.ends = init.attr_ints("ends");
    if (init.has_attr("axes")) attrs.axes = init.attr_ints("axes");
  }
  return attrs;
}

int64_t SliceWindow::source_offset(const Shape& in_shape) const {
  const std::vector<int64_t> strides = shape_strides(in_shape);
  int64_t offset = 0;
  for (size_t d = 0; d < in_shape.size(); ++d) offset += first[d] * strides[d];
  return offset;
}

std::vector<int64_t> SliceWindow::source_strides(const Shape& in_shape) const {
  std::vector<int64_t> strides = shape_strides(in_shape);
  for (size_t d = 0; d < in_shape.size(); ++d) strides[d] *= step[d];
  return strides;
}

SliceWindow resolve_slice_window(const SliceAttrs& attrs, const Shape& in_shape, const KernelContext& ctx) {
  const int64_t rank = static_cast<int64_t>(in_shape.size());
  std::vector<int64_t> starts = attrs.starts;
  std::vector<int64_t> ends = attrs.ends;
  std::optional<std::vector<int64_t>> axes = attrs.axes;
  std::vector<int64_t> steps;
  if (!attrs.from_attrs) {
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

  SliceWindow w;
  w.out_shape = in_shape;
  w.first.assign(static_cast<size_t>(rank), 0);
  w.step.assign(static_cast<size_t>(rank), 1);
  for (size_t i = 0; i < norm_axes.size(); ++i) {
    const int64_t axis = norm_axes[i];
    const int64_t dim = in_shape[axis];
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
    w.out_shape[axis] = count;
    w.first[axis] = count > 0 ? start : 0;
    w.step[axis] = count > 1 ? step : 0;  // a single element never moves, whatever the step
  }
  for (int64_t d = 0; d < rank; ++d)
    if (w.out_shape[d] <= 1) w.step[d] = 0;
  return w;
}

}  // namespace tensor_ops

namespace {

class SliceKernel final : public Kernel {
 public:
  explicit SliceKernel(const KernelInit& init) : attrs_(tensor_ops::SliceAttrs::parse(init)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    const tensor_ops::SliceWindow w = tensor_ops::resolve_slice_window(attrs_, data.shape(), ctx);
    Tensor& out = ctx.allocate_output(0, data.dtype(), w.out_shape);
    tensor_ops::visit_storage_type(data.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      tensor_ops::strided_copy(tensor_ops::elements<S>(data), w.source_offset(data.shape()),
                               w.source_strides(data.shape()), w.out_shape, tensor_ops::elements<S>(out));
    });
  }

 private:
  tensor_ops::SliceAttrs attrs_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Slice", (1, 10), SliceKernel);

}  // namespace parity::runtime
