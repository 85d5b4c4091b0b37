// QuantizeLinear, DequantizeLinear (per-tensor, and per-axis since opset 13) and
// DynamicQuantizeLinear. https://github.com/onnx/onnx/blob/main/docs/Operators.md#QuantizeLinear
// Rounding is half-to-even, results saturate to the quantized type's range.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "runtime/ops/common/axis.h"
#include "runtime/ops/common/dispatch.h"
#include "runtime/ops/common/elementwise.h"

namespace parity::runtime::ops {
namespace {

using QuantTypes = TypeList<uint8_t, int8_t>;

template <typename Q>
Q saturate(double v) {
  v = std::clamp(v, static_cast<double>(std::numeric_limits<Q>::lowest()), static_cast<double>(std::numeric_limits<Q>::max()));
  return static_cast<Q>(v);
}

/// Per-element scale/zero-point index: 0 for per-tensor, the coordinate along axis for per-axis.
struct QuantParams {
  int64_t inner = 1;  // product of dims after axis
  int64_t len = 1;    // size of the quantization axis, 1 for per-tensor
  int64_t index(int64_t i) const { return len == 1 ? 0 : (i / inner) % len; }
};

QuantParams quant_params(const KernelContext& ctx, const Tensor& x, const Tensor& scale, const Tensor* zero_point,
                         int64_t axis_attr) {
  QuantParams p;
  if (zero_point && zero_point->numel() != scale.numel())
    ctx.fail("zero point has ", zero_point->numel(), " elements, scale has ", scale.numel());
  if (scale.numel() == 1) return p;  // per-tensor
  if (scale.rank() != 1) ctx.fail("scale must be a scalar or 1-D, got shape ", shape_to_string(scale.shape()));
  const int64_t axis = normalize_axis(axis_attr, x.rank(), ctx);
  if (scale.numel() != x.dim(axis))
    ctx.fail("scale has ", scale.numel(), " elements but axis ", axis, " of the input has ", x.dim(axis));
  p.len = x.dim(axis);
  p.inner = size_from_axis(x.shape(), axis + 1);
  return p;
}

class QuantizeLinearKernel final : public Kernel {
 public:
  explicit QuantizeLinearKernel(const KernelInit& init) : axis_(init.attr_int("axis", 1)) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    const Tensor* zp = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    const QuantParams p = quant_params(ctx, x, scale, zp, axis_);
    const DType out_dtype = zp ? zp->dtype() : DType::kUInt8;
    std::vector<double> scales(static_cast<size_t>(scale.numel()));
    for (size_t i = 0; i < scales.size(); ++i) scales[i] = scale.value_as_double(static_cast<int64_t>(i));
    dispatch_dtype<QuantTypes>(out_dtype, ctx, [&](auto qtag) {
      using Q = typename decltype(qtag)::type;
      dispatch_dtype<TypeList<float, double, Float16, BFloat16, int32_t>>(x.dtype(), ctx, [&](auto tag) {
        using T = typename decltype(tag)::type;
        Tensor& y = ctx.allocate_output(0, out_dtype, x.shape());
        const T* in = x.data<T>();
        const Q* pz = zp ? zp->data<Q>() : nullptr;
        Q* out = y.data<Q>();
        for (int64_t i = 0; i < x.numel(); ++i) {
          const int64_t q = p.index(i);
          // Divide in the input's own precision: a float32 quotient that rounds to exactly .5 must
          // round half-to-even like the spec's float32 reference, not as its double value would.
          using C = std::conditional_t<std::is_integral_v<compute_t<T>>, double, compute_t<T>>;
          const C quotient = static_cast<C>(to_compute(in[i])) / static_cast<C>(scales[q]);
          out[i] = saturate<Q>(std::nearbyint(static_cast<double>(quotient)) + (pz ? pz[q] : 0));
        }
      });
    });
  }

 private:
  int64_t axis_;
};

class DequantizeLinearKernel final : public Kernel {
 public:
  explicit DequantizeLinearKernel(const KernelInit& init) : axis_(init.attr_int("axis", 1)) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    const Tensor* zp = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    if (zp && zp->dtype() != x.dtype())
      ctx.fail("zero point has type ", dtype_name(zp->dtype()), ", expected ", dtype_name(x.dtype()));
    const QuantParams p = quant_params(ctx, x, scale, zp, axis_);
    dispatch_dtype<TypeList<uint8_t, int8_t, int32_t>>(x.dtype(), ctx, [&](auto qtag) {
      using Q = typename decltype(qtag)::type;
      dispatch_dtype<FloatTypes>(scale.dtype(), ctx, [&](auto tag) {
        using T = typename decltype(tag)::type;
        Tensor& y = ctx.allocate_output(0, scale.dtype(), x.shape());
        const Q* in = x.data<Q>();
        const Q* pz = zp ? zp->data<Q>() : nullptr;
        const T* ps = scale.data<T>();
        T* out = y.data<T>();
        for (int64_t i = 0; i < x.numel(); ++i) {
          const int64_t q = p.index(i);
          const double v = (static_cast<double>(in[i]) - (pz ? static_cast<double>(pz[q]) : 0.0)) *
                           static_cast<double>(to_compute(ps[q]));
          out[i] = convert_scalar<T>(static_cast<compute_t<T>>(v));
        }
      });
    });
  }

 private:
  int64_t axis_;
};

class DynamicQuantizeLinearKernel final : public Kernel {
 public:
  explicit DynamicQuantizeLinearKernel(const KernelInit&) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    dispatch_dtype<FloatTypes>(x.dtype(), ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      const T* in = x.data<T>();
      // The range always includes 0 so that 0 is exactly representable.
      C lo = 0, hi = 0;
      for (int64_t i = 0; i < x.numel(); ++i) {
        lo = std::min(lo, to_compute(in[i]));
        hi = std::max(hi, to_compute(in[i]));
      }
      const C scale = (hi - lo) / C(255);
      const uint8_t zero_point = scale == C(0) ? 0 : saturate<uint8_t>(std::nearbyint(static_cast<double>(C(0) - lo / scale)));
      Tensor& y = ctx.allocate_output(0, DType::kUInt8, x.shape());
      uint8_t* out = y.data<uint8_t>();
      for (int64_t i = 0; i < x.numel(); ++i)
        out[i] = scale == C(0) ? zero_point
                               : saturate<uint8_t>(std::nearbyint(static_cast<double>(to_compute(in[i]) / scale)) + zero_point);
      ctx.allocate_output(1, x.dtype(), {}).data<T>()[0] = from_compute<T>(scale);
      ctx.allocate_output(2, DType::kUInt8, {}).data<uint8_t>()[0] = zero_point;
    });
  }
};

}  // namespace

PARITY_REGISTER_KERNEL("", "QuantizeLinear", 10, QuantizeLinearKernel);
PARITY_REGISTER_KERNEL("", "QuantizeLinear", 13, QuantizeLinearKernel);
PARITY_REGISTER_KERNEL("", "DequantizeLinear", 10, DequantizeLinearKernel);
PARITY_REGISTER_KERNEL("", "DequantizeLinear", 13, DequantizeLinearKernel);
PARITY_REGISTER_KERNEL("", "DynamicQuantizeLinear", 11, DynamicQuantizeLinearKernel);

}  // namespace parity::runtime::ops
