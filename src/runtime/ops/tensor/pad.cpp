// Spec: https://onnx.ai/onnx/operators/onnx__Pad.html, onnx__CenterCropPad.html
// Pad: versions 1/2 take pads ('paddings' in 1) and value as attributes; 11+ take pads and
// constant_value as inputs, 18 adds the axes input, 19 the wrap mode. CenterCropPad (opset 18).
#include "core/allocation_limit.h"
#include "runtime/ops/common/axis.h"
#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime {
namespace {

using tensor_ops::elements;

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

/// Source index for output position i (before the begin padding is removed) or -1 for the
/// constant fill.
int64_t source_index(int64_t i, int64_t dim, PadMode mode) {
  if (i >= 0 && i < dim) return i;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return i < 0 ? 0 : dim - 1;
    case PadMode::kWrap: return ((i % dim) + dim) % dim;
    case PadMode::kReflect: {
      if (dim == 1) return 0;
      const int64_t period = 2 * (dim - 1);
      const int64_t m = ((i % period) + period) % period;
      return m < dim ? m : period - m;
    }
  }
  return -1;
}

class PadKernel final : public Kernel {
 public:
  explicit PadKernel(const KernelInit& init) : from_attrs_(init.opset() < 11) {
    const std::string mode = init.attr_string("mode", "constant");
    if (mode == "constant") {
      mode_ = PadMode::kConstant;
    } else if (mode == "reflect") {
      mode_ = PadMode::kReflect;
    } else if (mode == "edge") {
      mode_ = PadMode::kEdge;
    } else if (mode == "wrap" && init.opset() >= 19) {
      mode_ = PadMode::kWrap;
    } else {
      init.fail("unsupported mode '", mode, "'");
    }
    if (from_attrs_) {
      attr_pads_ = init.opset() < 2 ? init.attr_ints("paddings") : init.attr_ints("pads");
      attr_value_ = init.attr_float("value", 0.0f);
    }
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    const int64_t rank = data.rank();
    std::vector<int64_t> pads = attr_pads_;
    std::vector<int64_t> axes;
    const bool axes_given = !from_attrs_ && ctx.has_input(3);
    if (!from_attrs_) pads = ops::read_int_values(ctx, ctx.input(1), "pads");
    if (axes_given) {
      axes = ops::normalize_axes(ops::read_int_values(ctx, ctx.input(3), "axes"), rank, ctx);
    } else {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    if (pads.size() != 2 * axes.size())
      ctx.fail("pads has ", pads.size(), " entries, expected ", 2 * axes.size(), " for ", axes.size(), " axes");
    std::vector<int64_t> begin(static_cast<size_t>(rank), 0);
    std::vector<int64_t> end(static_cast<size_t>(rank), 0);
    for (size_t i = 0; i < axes.size(); ++i) {
      begin[axes[i]] = pads[i];
      end[axes[i]] = pads[i + axes.size()];
    }

    std::vector<std::vector<int64_t>> maps(static_cast<size_t>(rank));
    Shape out_shape(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t dim = data.shape()[d];
      // Each side may remove at most the axis; the sum is checked because pads come from data.
      if (begin[d] < -dim || end[d] < -dim || __builtin_add_overflow(dim, begin[d], &out_shape[d]) ||
          __builtin_add_overflow(out_shape[d], end[d], &out_shape[d]) ||
          out_shape[d] < 0)
        ctx.fail("pads ", shape_to_string(pads), " remove more than the ", dim, " elements of axis ", d,
                 " or make it too large to address");
      checked_tensor_bytes(DType::kInt64, Shape{out_shape[d]});  // the axis's index map below
      if (dim == 0 && out_shape[d] > 0 && mode_ != PadMode::kConstant)
        ctx.fail("cannot pad the empty axis ", d, " in a non-constant mode");
      maps[d].resize(static_cast<size_t>(out_shape[d]));
      for (int64_t o = 0; o < out_shape[d]; ++o) maps[d][o] = source_index(o - begin[d], dim, mode_);
    }

    Tensor fill = fill_value(ctx, data.dtype());
    Tensor& out = ctx.allocate_output(0, data.dtype(), out_shape);
    if (out.numel() == 0) return;
    tensor_ops::visit_storage_type(data.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      tensor_ops::axis_map_copy(elements<S>(data), data.shape(), maps, elements<S>(fill)[0], elements<S>(out));
    });
  }

 private:
  /// One-element tensor of the data's dtype holding the constant fill.
  Tensor fill_value(const KernelContext& ctx, DType dtype) const {
    if (!from_attrs_ && ctx.has_input(2)) {
      const Tensor& value = ctx.input(2);
      if (value.numel() == 0) return Tensor(dtype, {1});
      if (value.numel() != 1) ctx.fail("constant_value must be a scalar, got shape ", shape_to_string(value.shape()));
      if (value.dtype() != dtype)
        ctx.fail("constant_value has dtype ", dtype_name(value.dtype()), ", data has ", dtype_name(dtype));
      return value.reshaped({1});
    }
    if (attr_value_ == 0.0f || dtype == DType::kString) return Tensor(dtype, {1});
    return Tensor::from_vector<float>({1}, {attr_value_}).cast(dtype);
  }

  bool from_attrs_;
  PadMode mode_ = PadMode::kConstant;
  std::vector<int64_t> attr_pads_;
  float attr_value_ = 0.0f;
};

/// Crops (centered, the extra element dropped at the end) or zero-pads (centered, the extra
/// element added at the end) each of `axes` to the requested length.
class CenterCropPadKernel final : public Kernel {
 public:
  explicit CenterCropPadKernel(const KernelInit& init) : axes_(init.attr_ints("axes", {})) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    std::vector<int64_t> axes = axes_;
    if (axes.empty())
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    axes = ops::normalize_axes(axes, rank, ctx);
    const std::vector<int64_t> lengths = ops::read_int_values(ctx, ctx.input(1), "shape");
    if (lengths.size() != axes.size())
      ctx.fail("shape has ", lengths.size(), " values for ", axes.size(), " axes");
    Shape out_shape = x.shape();
    std::vector<int64_t> shift(static_cast<size_t>(rank), 0);  // source index = output index + shift
    for (size_t k = 0; k < axes.size(); ++k) {
      const int64_t d = axes[k], dim = x.dim(d), want = lengths[k];
      if (want < 0) ctx.fail("shape value ", want, " for axis ", d, " is negative");
      shift[d] = dim >= want ? (dim - want) / 2 : -((want - dim) / 2);
      out_shape[d] = want;
    }
    Tensor& out = ctx.allocate_output(0, x.dtype(), out_shape);
    const std::vector<int64_t> in_strides = shape_strides(x.shape());
    tensor_ops::visit_storage_type(x.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      const S* src = elements<S>(x);
      S* dst = elements<S>(out);
      std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
      for (int64_t i = 0; i < out.numel(); ++i) {
        int64_t offset = 0;
        bool inside = true;
        for (int64_t d = 0; d < rank && inside; ++d) {
          const int64_t s = idx[d] + shift[d];
          inside = s >= 0 && s < x.dim(d);
          offset += s * in_strides[d];
        }
        dst[i] = inside ? src[offset] : S{};
        for (int64_t d = rank - 1; d >= 0; --d) {
          if (++idx[d] < out_shape[d]) break;
          idx[d] = 0;
        }
      }
    });
  }

 private:
  std::vector<int64_t> axes_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Pad", (1, 2, 11, 18, 19), PadKernel);
PARITY_REGISTER_KERNEL("", "CenterCropPad", 18, CenterCropPadKernel);

}  // namespace parity::runtime
