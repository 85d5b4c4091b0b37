// Spec: https://onnx.ai/onnx/operators/onnx__Softmax.html, onnx__LogSoftmax.html,
//       onnx__Hardmax.html
// Softmax, LogSoftmax, Hardmax.
// Before opset 13 the input is coerced to 2-D at 'axis' (default 1) and normalized over everything
// from 'axis' on; since 13 only the single 'axis' (default -1) is normalized. float32 and float64
// rows are summed in double; float16 and bfloat16 Softmax rounds each step as the spec's reference
// does (softmax_as_numpy).
#include <cmath>
#include <limits>
#include <type_traits>

#include "runtime/ops/common/axis.h"
#include "runtime/ops/common/dispatch.h"
#include "runtime/ops/common/elementwise.h"

namespace parity::runtime::ops {
namespace {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

template <SoftmaxKind kKind>
class SoftmaxKernel final : public Kernel {
 public:
  explicit SoftmaxKernel(const KernelInit& init)
      : flatten_(init.spec().since_version < 13), axis_(init.attr_int("axis", flatten_ ? 1 : -1)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    // A scalar is normalized as a one-element vector.
    const int64_t axis = rank == 0 ? 0 : normalize_axis(axis_, rank, ctx);
    const int64_t outer = rank == 0 ? 1 : size_to_axis(x.shape(), axis);
    int64_t len, inner;
    if (flatten_) {
      len = rank == 0 ? 1 : size_from_axis(x.shape(), axis);
      inner = 1;
    } else {
      len = rank == 0 ? 1 : x.dim(axis);
      inner = rank == 0 ? 1 : size_from_axis(x.shape(), axis + 1);
    }
    dispatch_dtype<FloatTypes>(x.dtype(), ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor& out = ctx.allocate_output(0, x.dtype(), x.shape());
      if (x.numel() == 0) return;
      const T* in = x.data<T>();
      T* y = out.data<T>();
      ctx.parallel_for(outer * inner, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t base = (r / inner) * len * inner + (r % inner);
          normalize(in + base, y + base, len, inner);
        }
      });
    });
  }

 private:
  template <typename T>
  static void normalize(const T* in, T* out, int64_t len, int64_t stride) {
    using C = compute_t<T>;
    C peak = -std::numeric_limits<C>::infinity();
    int64_t arg = 0;
    for (int64_t k = 0; k < len; ++k) {
      const C v = to_compute(in[k * stride]);
      if (v > peak) {
        peak = v;
        arg = k;
      }
    }
    if constexpr (kKind == SoftmaxKind::kHardmax) {
      for (int64_t k = 0; k < len; ++k) out[k * stride] = from_compute<T>(C(k == arg ? 1 : 0));
      return;
    } else if constexpr (kKind == SoftmaxKind::kSoftmax && is_half_v<T>) {
      softmax_as_numpy(in, out, len, stride, peak);
    } else {
      // Accumulate in double so float32 sums over long rows stay accurate.
      double sum = 0.0;
      for (int64_t k = 0; k < len; ++k) sum += std::exp(static_cast<double>(to_compute(in[k * stride])) - peak);
      if constexpr (kKind == SoftmaxKind::kSoftmax) {
        for (int64_t k = 0; k < len; ++k)
          out[k * stride] = from_compute<T>(std::exp(static_cast<double>(to_compute(in[k * stride])) - peak) / sum);
      } else {
        const double log_sum = std::log(sum);
        for (int64_t k = 0; k < len; ++k)
          out[k * stride] = from_compute<T>(static_cast<double>(to_compute(in[k * stride])) - peak - log_sum);
      }
    }
  }

  template <typename T>
  static constexpr bool is_half_v = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

  /// Softmax of a float16 or bfloat16 row as the spec's reference computes it (numpy on arrays of
  /// that dtype): x - max, exp and the division each round to the dtype; the sum rounds after
  /// every addition for bfloat16 (ml_dtypes adds element by element) and once, after summing in
  /// float, for float16 (numpy's float16 sum). One ulp of these types is 0.05% to 0.4%, so
  /// rounding only at the end would differ from the spec's results.
  template <typename T>
  static void softmax_as_numpy(const T* in, T* out, int64_t len, int64_t stride, float peak) {
    auto round = [](float v) { return static_cast<float>(T(v)); };
    float sum = 0.0f;
    for (int64_t k = 0; k < len; ++k) {
      const float e = round(std::exp(round(static_cast<float>(in[k * stride]) - peak)));
      out[k * stride] = T(e);
      sum = std::is_same_v<T, BFloat16> ? round(sum + e) : sum + e;
    }
    sum = round(sum);
    for (int64_t k = 0; k < len; ++k) out[k * stride] = T(static_cast<float>(out[k * stride]) / sum);
  }

  bool flatten_;
  int64_t axis_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Softmax", (1, 11, 13), SoftmaxKernel<SoftmaxKind::kSoftmax>);
PARITY_REGISTER_KERNEL("", "LogSoftmax", (1, 11, 13), SoftmaxKernel<SoftmaxKind::kLogSoftmax>);
PARITY_REGISTER_KERNEL("", "Hardmax", (1, 11, 13), SoftmaxKernel<SoftmaxKind::kHardmax>);

}  // namespace parity::runtime::ops
