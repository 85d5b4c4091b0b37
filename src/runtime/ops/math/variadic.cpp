// Spec: https://onnx.ai/onnx/operators/onnx__Max.html, onnx__Min.html, onnx__Sum.html,
//       onnx__Mean.html
// Variadic element-wise ops with numpy broadcasting of all inputs: Max, Min, Sum, Mean.
//
// Max/Min propagate NaN like numpy.maximum/minimum.
#include <array>
#include <cmath>
#include <type_traits>

#include "runtime/ops/common/elementwise.h"

namespace parity::runtime::ops {
namespace {

enum class Variadic { kMax, kMin, kSum, kMean };

template <Variadic kOp>
class VariadicKernel final : public Kernel {
 public:
  explicit VariadicKernel(const KernelInit& init) {
    if (init.num_inputs() == 0) init.fail("needs at least one input");
  }
  void compute(KernelContext& ctx) const override {
    const size_t n = ctx.num_inputs();
    const DType dtype = ctx.input(0).dtype();
    std::vector<Shape> shapes;
    for (size_t i = 0; i < n; ++i) {
      const Tensor& t = ctx.input(i);
      if (t.dtype() != dtype)
        ctx.fail("input ", i, " has type ", dtype_name(t.dtype()), ", expected ", dtype_name(dtype));
      shapes.push_back(t.shape());
    }
    const Shape shape = broadcast_shapes(ctx, shapes);
    using Types = std::conditional_t<kOp == Variadic::kMax || kOp == Variadic::kMin, NumericTypes, FloatTypes>;
    dispatch_dtype<Types>(dtype, ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor& out = ctx.allocate_output(0, dtype, shape);
      const Tensor& first = ctx.input(0);
      const T* src = first.data<T>();
      T* dst = out.data<T>();
      for_each_broadcast(shape, std::array<Shape, 1>{first.shape()},
                         [&](int64_t i, const std::array<int64_t, 1>& off) { dst[i] = src[off[0]]; });
      // Accumulate in place: map_binary reads acc[i] before writing acc[i].
      for (size_t k = 1; k < n; ++k)
        map_binary<T, T, T>(ctx, out, ctx.input(k), out, [](T a, T b) { return combine(a, b); });
      if constexpr (kOp == Variadic::kMean) {
        const auto count = static_cast<compute_t<T>>(n);
        for (int64_t i = 0; i < out.numel(); ++i) dst[i] = from_compute<T>(to_compute(dst[i]) / count);
      }
    });
  }

 private:
  template <typename T>
  static T combine(T a, T b) {
    const auto ca = to_compute(a), cb = to_compute(b);
    if constexpr (kOp == Variadic::kSum || kOp == Variadic::kMean) {
      if constexpr (std::is_integral_v<decltype(ca)>) return wrap_add(a, b);
      else return from_compute<T>(ca + cb);
    } else {
      if constexpr (!std::is_integral_v<decltype(ca)>) {
        if (std::isnan(ca)) return a;
        if (std::isnan(cb)) return b;
      }
      if constexpr (kOp == Variadic::kMax) return ca < cb ? b : a;
      else return cb < ca ? b : a;
    }
  }
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Max", (1, 6, 8, 12, 13), VariadicKernel<Variadic::kMax>);
PARITY_REGISTER_KERNEL("", "Min", (1, 6, 8, 12, 13), VariadicKernel<Variadic::kMin>);
PARITY_REGISTER_KERNEL("", "Sum", (1, 6, 8, 13), VariadicKernel<Variadic::kSum>);
PARITY_REGISTER_KERNEL("", "Mean", (1, 6, 8, 13), VariadicKernel<Variadic::kMean>);

}  // namespace parity::runtime::ops
