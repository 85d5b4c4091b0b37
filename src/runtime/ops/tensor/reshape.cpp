// Spec: https://onnx.ai/onnx/operators/onnx__Reshape.html, onnx__Flatten.html, onnx__Squeeze.html,
//       onnx__Unsqueeze.html
// Shape-only ops: the output shares the input's buffer with a new shape.
#include <algorithm>

#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime {
namespace {


std::vector<int64_t> axes_input(const KernelContext& ctx, size_t index) {
  const Tensor& t = ctx.input(index);
  if (t.rank() > 1) ctx.fail("axes must be a 1-D tensor, got shape ", shape_to_string(t.shape()));
  return ops::read_int_values(ctx, t, "axes");
}

/// Reshape-1 takes the shape as an attribute, later versions as input 1; allowzero since 14.
class ReshapeKernel final : public Kernel {
 public:
  explicit ReshapeKernel(const KernelInit& init)
      : shape_from_attr_(init.opset() < 5), allow_zero_(init.attr_int("allowzero", 0) != 0) {
    if (shape_from_attr_) attr_shape_ = init.attr_ints("shape");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    std::vector<int64_t> requested;
    if (shape_from_attr_) {
      requested = attr_shape_;
    } else {
      const Tensor& shape = ctx.input(1);
      if (shape.rank() != 1) ctx.fail("shape must be a 1-D tensor, got shape ", shape_to_string(shape.shape()));
      requested = ops::read_int_values(ctx, shape, "shape");
    }
    Shape out(requested.size());
    int64_t inferred = -1;
    int64_t known = 1;
    bool overflow = false, has_zero = false;  // a product past int64 is fine only with a 0 dim
    for (size_t i = 0; i < requested.size(); ++i) {
      const int64_t d = requested[i];
      if (d == -1) {
        if (inferred >= 0) ctx.fail("shape ", shape_to_string(requested), " has more than one -1");
        inferred = static_cast<int64_t>(i);
        continue;
      }
      if (d == 0 && !allow_zero_) {
        if (static_cast<int64_t>(i) >= data.rank())
          ctx.fail("shape ", shape_to_string(requested), " copies dimension ", i, " (0) but the input ",
                   shape_to_string(data.shape()), " has rank ", data.rank());
        out[i] = data.shape()[i];
      } else if (d < 0) {
        ctx.fail("shape ", shape_to_string(requested), " has the invalid dimension ", d);
      } else {
        out[i] = d;
      }
      overflow = __builtin_mul_overflow(known, out[i], &known) || overflow;
      has_zero = has_zero || out[i] == 0;
    }
    if (has_zero) known = 0;
    if (overflow && !has_zero)
      ctx.fail("shape ", shape_to_string(requested), " has more elements than a 64-bit count can hold");
    if (inferred >= 0) {
      if (known == 0)
        ctx.fail("cannot infer the -1 dimension of ", shape_to_string(requested), " when other dimensions are 0");
      if (data.numel() % known != 0)
        ctx.fail("cannot reshape ", shape_to_string(data.shape()), " to ", shape_to_string(requested));
      out[inferred] = data.numel() / known;
    } else if (known != data.numel()) {
      ctx.fail("cannot reshape ", shape_to_string(data.shape()), " (", data.numel(), " elements) to ",
               shape_to_string(out), " (", known, " elements)");
    }
    ctx.set_output(0, data.reshaped(std::move(out)));
  }

 private:
  bool shape_from_attr_;
  bool allow_zero_;
  std::vector<int64_t> attr_shape_;
};

class FlattenKernel final : public Kernel {
 public:
  explicit FlattenKernel(const KernelInit& init) : axis_(init.attr_int("axis", 1)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    // axis lies in [-rank, rank]; axis == rank puts everything into the first dimension.
    const int64_t axis = axis_ < 0 ? axis_ + data.rank() : axis_;
    if (axis < 0 || axis > data.rank())
      ctx.fail("axis ", axis_, " is out of range for a tensor of rank ", data.rank());
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= data.shape()[d];
    int64_t inner = 1;
    for (int64_t d = axis; d < data.rank(); ++d) inner *= data.shape()[d];
    ctx.set_output(0, data.reshaped({outer, inner}));
  }

 private:
  int64_t axis_;
};

/// Squeeze: axes attribute before opset 13, optional input 1 from 13.
class SqueezeKernel final : public Kernel {
 public:
  explicit SqueezeKernel(const KernelInit& init) : axes_from_input_(init.opset() >= 13) {
    if (!axes_from_input_ && init.has_attr("axes")) attr_axes_ = init.attr_ints("axes");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    std::optional<std::vector<int64_t>> axes = attr_axes_;
    if (axes_from_input_ && ctx.has_input(1)) axes = axes_input(ctx, 1);
    std::vector<bool> drop(static_cast<size_t>(data.rank()), false);
    if (axes) {
      for (int64_t a : ops::normalize_axes(*axes, data.rank(), ctx)) {
        if (data.shape()[a] != 1)
          ctx.fail("cannot squeeze axis ", a, " of shape ", shape_to_string(data.shape()), ": its size is not 1");
        drop[a] = true;
      }
    } else {
      for (int64_t d = 0; d < data.rank(); ++d) drop[d] = data.shape()[d] == 1;
    }
    Shape out;
    for (int64_t d = 0; d < data.rank(); ++d)
      if (!drop[d]) out.push_back(data.shape()[d]);
    ctx.set_output(0, data.reshaped(std::move(out)));
  }

 private:
  bool axes_from_input_;
  std::optional<std::vector<int64_t>> attr_axes_;
};

/// Unsqueeze: axes attribute before opset 13, required input 1 from 13. Axes index the output.
class UnsqueezeKernel final : public Kernel {
 public:
  explicit UnsqueezeKernel(const KernelInit& init) : axes_from_input_(init.opset() >= 13) {
    if (!axes_from_input_) attr_axes_ = init.attr_ints("axes");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    const std::vector<int64_t> axes = axes_from_input_ ? axes_input(ctx, 1) : attr_axes_;
    const int64_t out_rank = data.rank() + static_cast<int64_t>(axes.size());
    std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
    for (int64_t a : ops::normalize_axes(axes, out_rank, ctx)) inserted[a] = true;
    Shape out;
    size_t next = 0;
    for (int64_t d = 0; d < out_rank; ++d) out.push_back(inserted[d] ? 1 : data.shape()[next++]);
    ctx.set_output(0, data.reshaped(std::move(out)));
  }

 private:
  bool axes_from_input_;
  std::vector<int64_t> attr_axes_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Reshape", (1, 5, 14), ReshapeKernel);
PARITY_REGISTER_KERNEL("", "Flatten", (1, 11), FlattenKernel);
PARITY_REGISTER_KERNEL("", "Squeeze", (1, 13), SqueezeKernel);
PARITY_REGISTER_KERNEL("", "Unsqueeze", (1, 13), UnsqueezeKernel);

}  // namespace parity::runtime
