// Spec: https://onnx.ai/onnx/operators/onnx__CumSum.html, onnx__Det.html, onnx__CumProd.html
// CumSum and CumProd (opset 26) (exclusive/reverse along a runtime axis) and Det (LU with partial
// pivoting, batched).
#include <cmath>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtime/ops/common/axis.h"
#include "runtime/ops/common/dispatch.h"
#include "runtime/ops/common/elementwise.h"

namespace parity::runtime::ops {
namespace {

using CumSumTypes = TypeList<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t>;

/// The running combination of CumSum (+, starting at 0) and CumProd (*, starting at 1).
struct CumulativeSum {
  template <typename A>
  static A identity() { return A(0); }
  template <typename A>
  static A combine(A acc, A v) { return wrap_add(acc, v); }
};
struct CumulativeProduct {
  template <typename A>
  static A identity() { return A(1); }
  template <typename A>
  static A combine(A acc, A v) { return wrap_mul(acc, v); }
};

template <typename Combine>
class CumulativeKernel final : public Kernel {
 public:
  explicit CumulativeKernel(const KernelInit& init)
      : exclusive_(init.attr_int("exclusive", 0) != 0), reverse_(init.attr_int("reverse", 0) != 0) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() == 0) ctx.fail("input must have rank >= 1");
    const int64_t axis = normalize_axis(read_int_scalar(ctx, ctx.input(1), "axis"), x.rank(), ctx);
    const int64_t outer = size_to_axis(x.shape(), axis);
    const int64_t len = x.dim(axis);
    const int64_t inner = size_from_axis(x.shape(), axis + 1);
    dispatch_dtype<CumSumTypes>(x.dtype(), ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using A = std::conditional_t<is_float_v<T>, double, T>;
      Tensor& out = ctx.allocate_output(0, x.dtype(), x.shape());
      const T* in = x.data<T>();
      T* po = out.data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t base = o * len * inner + i;
          A sum = Combine::template identity<A>();
          for (int64_t s = 0; s < len; ++s) {
            const int64_t k = reverse_ ? len - 1 - s : s;
            const A v = static_cast<A>(to_compute(in[base + k * inner]));
            if (!exclusive_) sum = Combine::combine(sum, v);
            po[base + k * inner] = convert_scalar<T>(sum);
            if (exclusive_) sum = Combine::combine(sum, v);
          }
        }
      }
    });
  }

 private:
  bool exclusive_, reverse_;
};

class DetKernel final : public Kernel {
 public:
  explicit DetKernel(const KernelInit&) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() < 2 || x.dim(-1 + x.rank()) != x.dim(x.rank() - 2))
      ctx.fail("input must be a batch of square matrices, got shape ", shape_to_string(x.shape()));
    const int64_t n = x.dim(x.rank() - 1);
    const Shape batch(x.shape().begin(), x.shape().end() - 2);
    const int64_t count = shape_numel(batch);
    dispatch_dtype<FloatTypes>(x.dtype(), ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor& out = ctx.allocate_output(0, x.dtype(), batch);
      const T* in = x.data<T>();
      T* po = out.data<T>();
      std::vector<double> m(static_cast<size_t>(n * n));
      for (int64_t b = 0; b < count; ++b) {
        for (int64_t i = 0; i < n * n; ++i) m[i] = static_cast<double>(to_compute(in[b * n * n + i]));
        po[b] = convert_scalar<T>(determinant(m, n));
      }
    });
  }

 private:
  static double determinant(std::vector<double>& m, int64_t n) {
    double det = 1.0;
    for (int64_t c = 0; c < n; ++c) {
      int64_t pivot = c;
      for (int64_t r = c + 1; r < n; ++r)
        if (std::fabs(m[r * n + c]) > std::fabs(m[pivot * n + c])) pivot = r;
      if (m[pivot * n + c] == 0.0) return 0.0;
      if (pivot != c) {
        for (int64_t k = 0; k < n; ++k) std::swap(m[c * n + k], m[pivot * n + k]);
        det = -det;
      }
      const double d = m[c * n + c];
      det *= d;
      for (int64_t r = c + 1; r < n; ++r) {
        const double f = m[r * n + c] / d;
        for (int64_t k = c; k < n; ++k) m[r * n + k] -= f * m[c * n + k];
      }
    }
    return det;
  }
};

}  // namespace

PARITY_REGISTER_KERNEL("", "CumSum", (11, 14), CumulativeKernel<CumulativeSum>);
PARITY_REGISTER_KERNEL("", "Det", 11, DetKernel);
PARITY_REGISTER_KERNEL("", "CumProd", 26, CumulativeKernel<CumulativeProduct>);

}  // namespace parity::runtime::ops
