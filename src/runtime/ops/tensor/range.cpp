// Spec: https://onnx.ai/onnx/operators/onnx__Range.html
// Range.
#include <cmath>
#include <limits>

#include "runtime/ops/common/float_index.h"
#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime {
namespace {

class RangeKernel final : public Kernel {
 public:
  explicit RangeKernel(const KernelInit&) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& start_t = ctx.input(0);
    const Tensor& limit_t = ctx.input(1);
    const Tensor& delta_t = ctx.input(2);
    const DType dtype = start_t.dtype();
    if (limit_t.dtype() != dtype || delta_t.dtype() != dtype)
      ctx.fail("start, limit and delta must share one dtype, got ", dtype_name(dtype), ", ",
               dtype_name(limit_t.dtype()), ", ", dtype_name(delta_t.dtype()));
    for (const Tensor* t : {&start_t, &limit_t, &delta_t})
      if (t->numel() != 1) ctx.fail("start, limit and delta must be scalars, got shape ", shape_to_string(t->shape()));
    if (dtype == DType::kBool) ctx.fail("bool is not a valid Range dtype");
    visit_numeric_dtype(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (!std::is_same_v<T, bool>) {
        const T start = start_t.data<T>()[0];
        const T limit = limit_t.data<T>()[0];
        const T delta = delta_t.data<T>()[0];
        int64_t count = 0;
        if constexpr (std::is_integral_v<T>) {
          if (delta == 0) ctx.fail("delta must not be 0");
          const int64_t s = start, l = limit, d = delta;
          // In 128 bits: limit - start of int64 inputs can overflow 64.
          if ((d > 0 && l > s) || (d < 0 && l < s)) {
            const __int128 n = (static_cast<__int128>(l) - s - (d > 0 ? 1 : -1)) / d + 1;
            if (n > std::numeric_limits<int64_t>::max()) ctx.fail("the range holds ", static_cast<double>(n), " elements, too many to address");
            count = static_cast<int64_t>(n);
          }
        } else {
          const double d = static_cast<double>(delta);
          if (d == 0.0 || std::isnan(d)) ctx.fail("delta must be a non-zero number");
          const double n = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / d);
          if (!fits_int64(n)) ctx.fail("the range holds ", n, " elements, too many to address");
          count = n > 0 ? static_cast<int64_t>(n) : 0;
        }
        Tensor& out = ctx.allocate_output(0, dtype, {count});
        T* dst = out.data<T>();
        for (int64_t i = 0; i < count; ++i) {
          if constexpr (std::is_integral_v<T>) {
            dst[i] = static_cast<T>(start + static_cast<T>(i) * delta);
          } else {
            // Computed in the element type (float16 via float) as start + i * delta.
            using Math = std::conditional_t<std::is_same_v<T, double>, double, float>;
            dst[i] = T(static_cast<Math>(start) + static_cast<Math>(i) * static_cast<Math>(delta));
          }
        }
      }
    });
  }
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Range", 11, RangeKernel);

}  // namespace parity::runtime
