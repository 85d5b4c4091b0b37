// Spec: https://onnx.ai/onnx/operators/onnx__ArgMax.html, onnx__ArgMin.html
// ArgMax / ArgMin along one axis.
// Ties pick the first index unless select_last_index=1 (opset 12+). NaN counts as the extreme
// value (numpy.argmax/argmin return the first NaN).
#include <cmath>

#include "runtime/ops/common/axis.h"
#include "runtime/ops/common/dispatch.h"
#include "runtime/ops/common/elementwise.h"

namespace parity::runtime::ops {
namespace {

template <bool kMax>
class ArgReduceKernel final : public Kernel {
 public:
  explicit ArgReduceKernel(const KernelInit& init)
      : axis_(init.attr_int("axis", 0)),
        keepdims_(init.attr_int("keepdims", 1) != 0),
        select_last_(init.attr_int("select_last_index", 0) != 0) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t axis = normalize_axis(axis_, x.rank(), ctx);
    const int64_t len = x.dim(axis);
    if (len == 0) ctx.fail("cannot take the arg-extremum over an empty axis ", axis);
    Shape out_shape = x.shape();
    if (keepdims_) out_shape[axis] = 1;
    else out_shape.erase(out_shape.begin() + axis);
    const int64_t outer = size_to_axis(x.shape(), axis);
    const int64_t inner = size_from_axis(x.shape(), axis + 1);
    dispatch_dtype<NumericTypes>(x.dtype(), ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor& out = ctx.allocate_output(0, DType::kInt64, out_shape);
      const T* in = x.data<T>();
      int64_t* idx = out.data<int64_t>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const T* base = in + o * len * inner + i;
          int64_t best = 0;
          auto best_value = to_compute(base[0]);
          for (int64_t k = 1; k < len; ++k) {
            const auto v = to_compute(base[k * inner]);
            if (better(v, best_value, select_last_)) {
              best = k;
              best_value = v;
            }
          }
          idx[o * inner + i] = best;
        }
      }
    });
  }

 private:
  template <typename C>
  static bool better(C v, C best, bool take_ties) {
    if constexpr (!std::is_integral_v<C>) {
      if (std::isnan(best)) return take_ties && std::isnan(v);
      if (std::isnan(v)) return true;
    }
    if (v == best) return take_ties;
    return kMax ? v > best : v < best;
  }

  int64_t axis_;
  bool keepdims_;
  bool select_last_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "ArgMax", (1, 11, 12, 13), ArgReduceKernel<true>);
PARITY_REGISTER_KERNEL("", "ArgMin", (1, 11, 12, 13), ArgReduceKernel<false>);

}  // namespace parity::runtime::ops
