// Spec: https://onnx.ai/onnx/operators/onnx__QuantizeLinear.html, onnx__DequantizeLinear.html,
//       onnx__DynamicQuantizeLinear.html
// QuantizeLinear, DequantizeLinear (per-tensor, and per-axis since opset 13) and
// DynamicQuantizeLinear.
// Rounding is half-to-even, results saturate to the quantized type's range.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/low_precision.h"
#include "runtime/ops/common/axis.h"
#include "runtime/ops/common/dispatch.h"
#include "runtime/ops/common/elementwise.h"

namespace parity::runtime::ops {
namespace {

// 16-bit integers since opset 21; the float8, float4e2m1, int4/uint4 and int2/uint2 targets (opsets
// 19, 21, 23, 25) go through core/low_precision.h, one byte per element.
using QuantTypes = TypeList<uint8_t, int8_t, uint16_t, int16_t>;

/// NaN (0 / a zero scale, or a NaN input) has no integer value and converting it is undefined
/// behaviour; the spec leaves it open, and 0 is what it becomes here.
template <typename Q>
Q saturate(double v) {
  if (std::isnan(v)) return Q{0};
  v = std::clamp(v, static_cast<double>(std::numeric_limits<Q>::lowest()), static_cast<double>(std::numeric_limits<Q>::max()));
  return static_cast<Q>(v);
}

/// Per-element scale/zero-point index: 0 for per-tensor, the coordinate along axis for per-axis,
/// and for blocked quantization (opset 21) the element's own index with the axis coordinate
/// divided by the block size.
struct QuantParams {
  int64_t inner = 1;  // product of dims after axis
  int64_t len = 1;    // size of the quantization axis, 1 for per-tensor
  int64_t block = 0;  // block size, 0 when not blocked
  int64_t blocks = 1;  // scale's size along the axis when blocked
  int64_t index(int64_t i) const {
    if (block > 0) {
      const int64_t a = (i / inner) % len, o = i / (inner * len), r = i % inner;
      return (o * blocks + a / block) * inner + r;
    }
    return len == 1 ? 0 : (i / inner) % len;
  }
};

QuantParams quant_params(const KernelContext& ctx, const Tensor& x, const Tensor& scale, const Tensor* zero_point,
                         int64_t axis_attr, int64_t block_size) {
  QuantParams p;
  if (zero_point && zero_point->numel() != scale.numel())
    ctx.fail("zero point has ", zero_point->numel(), " elements, scale has ", scale.numel());
  if (block_size > 0) {
    const int64_t axis = normalize_axis(axis_attr, x.rank(), ctx);
    if (scale.rank() != x.rank()) ctx.fail("blocked scale must have the input's rank ", x.rank());
    for (int64_t d = 0; d < x.rank(); ++d) {
      const int64_t want = d == axis ? (x.dim(d) + block_size - 1) / block_size : x.dim(d);
      if (scale.dim(d) != want)
        ctx.fail("blocked scale shape ", shape_to_string(scale.shape()), " does not match input ",
                 shape_to_string(x.shape()), " with block_size ", block_size, " on axis ", axis);
    }
    p.len = x.dim(axis);
    p.inner = size_from_axis(x.shape(), axis + 1);
    p.block = block_size;
    p.blocks = scale.dim(axis);
    return p;
  }
  if (scale.numel() == 1) return p;  // per-tensor
  if (scale.rank() != 1) ctx.fail("scale must be a scalar or 1-D, got shape ", shape_to_string(scale.shape()));
  const int64_t axis = normalize_axis(axis_attr, x.rank(), ctx);
  if (scale.numel() != x.dim(axis))
    ctx.fail("scale has ", scale.numel(), " elements but axis ", axis, " of the input has ", x.dim(axis));
  p.len = x.dim(axis);
  p.inner = size_from_axis(x.shape(), axis + 1);
  return p;
}

/// x / scale in the input's own precision (see QuantizeLinearKernel), as a double.
template <typename T>
double quotient(T x, double scale) {
  using C = std::conditional_t<std::is_integral_v<compute_t<T>>, double, compute_t<T>>;
  return static_cast<double>(static_cast<C>(to_compute(x)) / static_cast<C>(scale));
}

/// QuantizeLinear to a low-precision type. Integers round half-to-even, add the zero point and
/// clamp; float8/float4 targets add the zero point's value and convert with Cast's rounding
/// (saturate attribute, opset 19).
void quantize_low_precision(KernelContext& ctx, const Tensor& x, const std::vector<double>& scales,
                            const Tensor* zp, const QuantParams& p, DType out_dtype, bool saturate) {
  Tensor& y = ctx.allocate_output(0, out_dtype, x.shape());
  auto* out = static_cast<uint8_t*>(y.raw_data());
  const auto* pz = zp ? static_cast<const uint8_t*>(zp->raw_data()) : nullptr;
  const bool integer = is_low_precision_integer(out_dtype);
  dispatch_dtype<TypeList<float, double, Float16, BFloat16, int32_t>>(x.dtype(), ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t q = p.index(i);
      const double zero = pz ? low_precision_to_double(out_dtype, pz[q]) : 0.0;
      double v = quotient(in[i], scales[q]);
      if (integer) v = std::nearbyint(v);
      out[i] = low_precision_from_double(out_dtype, v + zero, integer || saturate, RoundMode::kNearestEven);
    }
  });
}

class QuantizeLinearKernel final : public Kernel {
 public:
  explicit QuantizeLinearKernel(const KernelInit& init)
      : axis_(init.attr_int("axis", 1)),
        block_size_(init.attr_int("block_size", 0)),
        saturate_(init.attr_int("saturate", 1) != 0),
        output_dtype_(static_cast<DType>(init.attr_int("output_dtype", 0))) {
    if (block_size_ < 0) init.fail("block_size must not be negative");
  }
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    const Tensor* zp = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    const QuantParams p = quant_params(ctx, x, scale, zp, axis_, block_size_);
    // The zero point's type, else output_dtype (opset 21), else uint8.
    DType out_dtype = zp ? zp->dtype() : (output_dtype_ != DType::kUndefined ? output_dtype_ : DType::kUInt8);
    if (zp && output_dtype_ != DType::kUndefined && output_dtype_ != zp->dtype())
      ctx.fail("output_dtype ", dtype_name(output_dtype_), " differs from the zero point's ", dtype_name(zp->dtype()));
    std::vector<double> scales(static_cast<size_t>(scale.numel()));
    for (size_t i = 0; i < scales.size(); ++i) scales[i] = scale.value_as_double(static_cast<int64_t>(i));
    if (is_low_precision(out_dtype)) {
      quantize_low_precision(ctx, x, scales, zp, p, out_dtype, saturate_);
      return;
    }
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
          out[i] = saturate<Q>(std::nearbyint(quotient(in[i], scales[q])) + (pz ? pz[q] : 0));
        }
      });
    });
  }

 private:
  int64_t axis_;
  int64_t block_size_;
  bool saturate_;
  DType output_dtype_;
};

/// DequantizeLinear from a low-precision type: (value(x) - value(zero point)) * scale.
void dequantize_low_precision(KernelContext& ctx, const Tensor& x, const Tensor& scale, const Tensor* zp,
                              const QuantParams& p) {
  const auto* in = static_cast<const uint8_t*>(x.raw_data());
  const auto* pz = zp ? static_cast<const uint8_t*>(zp->raw_data()) : nullptr;
  dispatch_dtype<FloatTypes>(scale.dtype(), ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor& y = ctx.allocate_output(0, scale.dtype(), x.shape());
    const T* ps = scale.data<T>();
    T* out = y.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t q = p.index(i);
      const double zero = pz ? low_precision_to_double(x.dtype(), pz[q]) : 0.0;
      const double v = (low_precision_to_double(x.dtype(), in[i]) - zero) * static_cast<double>(to_compute(ps[q]));
      out[i] = convert_scalar<T>(static_cast<compute_t<T>>(v));
    }
  });
}

class DequantizeLinearKernel final : public Kernel {
 public:
  explicit DequantizeLinearKernel(const KernelInit& init)
      : axis_(init.attr_int("axis", 1)), block_size_(init.attr_int("block_size", 0)) {
    if (block_size_ < 0) init.fail("block_size must not be negative");
  }
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    const Tensor* zp = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    if (zp && zp->dtype() != x.dtype())
      ctx.fail("zero point has type ", dtype_name(zp->dtype()), ", expected ", dtype_name(x.dtype()));
    const QuantParams p = quant_params(ctx, x, scale, zp, axis_, block_size_);
    if (is_low_precision(x.dtype())) {
      dequantize_low_precision(ctx, x, scale, zp, p);
      return;
    }
    dispatch_dtype<TypeList<uint8_t, int8_t, uint16_t, int16_t, int32_t>>(x.dtype(), ctx, [&](auto qtag) {
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
  int64_t block_size_;
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

PARITY_REGISTER_KERNEL("", "QuantizeLinear", (10, 13, 21), QuantizeLinearKernel);
PARITY_REGISTER_KERNEL("", "DequantizeLinear", (10, 13, 21), DequantizeLinearKernel);
PARITY_REGISTER_KERNEL("", "DynamicQuantizeLinear", 11, DynamicQuantizeLinearKernel);

}  // namespace parity::runtime::ops
