// Spec: https://onnx.ai/onnx/operators/onnx__Clip.html, onnx__PRelu.html
// Clip (bounds as attributes before opset 11, optional scalar inputs since) and PRelu
// (slope broadcast to X).
#include <cmath>
#include <limits>

#include "runtime/ops/common/axis.h"
#include "runtime/ops/common/elementwise.h"

namespace parity::runtime::ops {
namespace {

template <typename C>
C clip_value(C x, C lo, C hi) {
  // NaN stays NaN; when lo > hi every value becomes hi (spec, opset 13).
  if (x < lo) x = lo;
  if (x > hi) x = hi;
  return x;
}

class ClipAttrKernel final : public Kernel {
 public:
  explicit ClipAttrKernel(const KernelInit& init)
      : min_(init.attr_float("min", -std::numeric_limits<float>::max())),
        max_(init.attr_float("max", std::numeric_limits<float>::max())) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    dispatch_dtype<FloatTypes>(x.dtype(), ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      Tensor& y = ctx.allocate_output(0, x.dtype(), x.shape());
      const C lo = static_cast<C>(min_), hi = static_cast<C>(max_);
      map_unary<T, T>(ctx, x, y, [&](T v) { return from_compute<T>(clip_value(to_compute(v), lo, hi)); });
    });
  }

 private:
  float min_, max_;
};

class ClipKernel final : public Kernel {
 public:
  explicit ClipKernel(const KernelInit&) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    dispatch_dtype<NumericTypes>(x.dtype(), ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
      if (ctx.has_input(1)) lo = to_compute(bound<T>(ctx, 1, "min"));
      if (ctx.has_input(2)) hi = to_compute(bound<T>(ctx, 2, "max"));
      Tensor& y = ctx.allocate_output(0, x.dtype(), x.shape());
      map_unary<T, T>(ctx, x, y, [&](T v) { return from_compute<T>(clip_value(to_compute(v), lo, hi)); });
    });
  }

 private:
  template <typename T>
  static T bound(const KernelContext& ctx, size_t index, const char* name) {
    const Tensor& t = ctx.input(index);
    if (t.dtype() != ctx.input(0).dtype())
      ctx.fail("input '", name, "' has type ", dtype_name(t.dtype()), ", expected ", dtype_name(ctx.input(0).dtype()));
    if (t.numel() != 1) ctx.fail("input '", name, "' must be a scalar, got shape ", shape_to_string(t.shape()));
    return t.data<T>()[0];
  }
};

class PReluKernel final : public Kernel {
 public:
  explicit PReluKernel(const KernelInit& init) : legacy_(init.spec().since_version < 7) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    Tensor slope = ctx.input(1);
    if (slope.dtype() != x.dtype())
      ctx.fail("slope has type ", dtype_name(slope.dtype()), ", expected ", dtype_name(x.dtype()));
    // Before opset 7 a 1-D slope of length C applied per channel (axis 1), not numpy-style.
    if (legacy_ && slope.rank() == 1 && x.rank() > 2 && slope.dim(0) == x.dim(1) && slope.dim(0) != 1) {
      Shape s(x.rank() - 1, 1);
      s[0] = slope.dim(0);
      slope = slope.reshaped(s);
    }
    if (!broadcasts_to(slope.shape(), x.shape()))
      ctx.fail("slope of shape ", shape_to_string(slope.shape()), " does not broadcast to X of shape ",
               shape_to_string(x.shape()));
    dispatch_dtype<SignedNumericTypes>(x.dtype(), ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor& y = ctx.allocate_output(0, x.dtype(), x.shape());
      map_binary<T, T, T>(ctx, x, slope, y, [](T v, T a) {
        const auto cv = to_compute(v);
        return cv < 0 ? from_compute<T>(wrap_mul(cv, to_compute(a))) : v;
      });
    });
  }

 private:
  bool legacy_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Clip", (1, 6), ClipAttrKernel);
PARITY_REGISTER_KERNEL("", "Clip", (11, 12, 13), ClipKernel);
PARITY_REGISTER_KERNEL("", "PRelu", (1, 6, 7, 9, 16), PReluKernel);

}  // namespace parity::runtime::ops
