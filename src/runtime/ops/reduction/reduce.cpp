// Spec: https://onnx.ai/onnx/operators/onnx__ReduceSum.html, onnx__ReduceMean.html,
//       onnx__ReduceMax.html, onnx__ReduceMin.html, onnx__ReduceProd.html, onnx__ReduceL1.html,
//       onnx__ReduceL2.html, onnx__ReduceLogSum.html, onnx__ReduceLogSumExp.html,
//       onnx__ReduceSumSquare.html
// Reductions over a set of axes: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
// ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare.
//
// 'axes' is an attribute until ReduceSum-13 / the others' opset 18, an optional input after that
// (with noop_with_empty_axes). Reducing an empty set gives the op's identity (0 for sums, 1 for
// Prod, -inf/+inf (integers: lowest/max) for Max/Min, NaN for Mean, -inf for the log forms).
// Floating values accumulate in double; integers in 64 bits, wrapping like numpy.
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>

#include "runtime/ops/common/axis.h"
#include "runtime/ops/common/broadcast.h"
#include "runtime/ops/common/dispatch.h"
#include "runtime/ops/common/elementwise.h"

namespace parity::runtime::ops {
namespace {

enum class Reduction { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

/// Accumulator type: double for floats, 64-bit integers (same signedness) otherwise.
template <typename T>
using acc_t = std::conditional_t<is_float_v<T>, double, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

template <Reduction kOp, typename T, typename A = acc_t<T>>
A initial_value() {
  if constexpr (kOp == Reduction::kProd) {
    return A(1);
  } else if constexpr (kOp == Reduction::kMax) {
    if constexpr (std::is_floating_point_v<A>) return -std::numeric_limits<A>::infinity();
    else return static_cast<A>(std::numeric_limits<T>::lowest());
  } else if constexpr (kOp == Reduction::kMin) {
    if constexpr (std::is_floating_point_v<A>) return std::numeric_limits<A>::infinity();
    else return static_cast<A>(std::numeric_limits<T>::max());
  } else {
    return A(0);
  }
}

template <Reduction kOp, typename A>
A accumulate(A acc, A x) {
  if constexpr (kOp == Reduction::kMax || kOp == Reduction::kMin) {
    if constexpr (std::is_floating_point_v<A>) {
      if (std::isnan(acc)) return acc;
      if (std::isnan(x)) return x;
    }
    if constexpr (kOp == Reduction::kMax) return x > acc ? x : acc;
    else return x < acc ? x : acc;
  } else if constexpr (kOp == Reduction::kProd) {
    return wrap_mul(acc, x);
  } else if constexpr (kOp == Reduction::kL1) {
    if constexpr (std::is_unsigned_v<A>) return wrap_add(acc, x);
    else return wrap_add(acc, x < 0 ? wrap_sub(A(0), x) : x);
  } else if constexpr (kOp == Reduction::kL2 || kOp == Reduction::kSumSquare) {
    return wrap_add(acc, wrap_mul(x, x));
  } else {  // Sum, Mean, LogSum
    return wrap_add(acc, x);
  }
}

template <Reduction kOp, typename T, typename A>
T finalize(A acc, int64_t count) {
  if constexpr (kOp == Reduction::kMean) {
    if constexpr (std::is_floating_point_v<A>) {
      return convert_scalar<T>(acc / static_cast<double>(count));
    } else {
      if (count == 0) return T(0);
      return convert_scalar<T>(acc / static_cast<A>(count));
    }
  } else if constexpr (kOp == Reduction::kL2) {
    return convert_scalar<T>(std::sqrt(static_cast<double>(acc)));
  } else if constexpr (kOp == Reduction::kLogSum) {
    return convert_scalar<T>(std::log(static_cast<double>(acc)));
  } else {
    return convert_scalar<T>(acc);
  }
}

template <Reduction kOp>
class ReduceKernel final : public Kernel {
 public:
  explicit ReduceKernel(const KernelInit& init)
      : keepdims_(init.attr_int("keepdims", 1) != 0),
        noop_with_empty_axes_(init.attr_int("noop_with_empty_axes", 0) != 0),
        axes_from_input_(kOp == Reduction::kSum ? init.spec().since_version >= 13 : init.spec().since_version >= 18) {
    if (!axes_from_input_) axes_attr_ = init.attr_ints("axes", {});
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    std::vector<int64_t> axes = axes_attr_;
    if (axes_from_input_ && ctx.has_input(1)) axes = read_int_values(ctx, ctx.input(1), "axes");
    if (axes.empty() && axes_from_input_ && noop_with_empty_axes_) {
      ctx.set_output(0, Value(x));
      return;
    }
    std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty());
    for (int64_t a : normalize_axes(axes, rank, ctx)) reduced[a] = true;

    Shape keep_shape = x.shape();
    Shape out_shape;
    int64_t count = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (reduced[d]) {
        count *= keep_shape[d];
        keep_shape[d] = 1;
        if (keepdims_) out_shape.push_back(1);
      } else {
        out_shape.push_back(keep_shape[d]);
      }
    }
    // ReduceMax and ReduceMin take bool since opset 20 (any / all).
    using Types = std::conditional_t<kOp == Reduction::kMax || kOp == Reduction::kMin, NumericAndBoolTypes, NumericTypes>;
    dispatch_dtype<Types>(x.dtype(), ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor& out = ctx.allocate_output(0, x.dtype(), out_shape);
      reduce<T>(x, keep_shape, count, out.data<T>());
    });
  }

 private:
  template <typename T>
  static void reduce(const Tensor& x, const Shape& keep_shape, int64_t count, T* out) {
    using A = acc_t<T>;
    const T* in = x.data<T>();
    const int64_t n_out = shape_numel(keep_shape);
    // Each input element's offset in the keepdims-shaped output, via broadcast strides.
    const std::array<Shape, 1> keep{keep_shape};
    if constexpr (kOp == Reduction::kLogSumExp) {
      std::vector<double> peak(n_out, -std::numeric_limits<double>::infinity());
      for_each_broadcast(x.shape(), keep, [&](int64_t i, const std::array<int64_t, 1>& o) {
        peak[o[0]] = accumulate<Reduction::kMax>(peak[o[0]], static_cast<double>(to_compute(in[i])));
      });
      std::vector<double> sum(n_out, 0.0);
      for_each_broadcast(x.shape(), keep, [&](int64_t i, const std::array<int64_t, 1>& o) {
        if (std::isfinite(peak[o[0]])) sum[o[0]] += std::exp(static_cast<double>(to_compute(in[i])) - peak[o[0]]);
      });
      for (int64_t j = 0; j < n_out; ++j)
        out[j] = convert_scalar<T>(std::isfinite(peak[j]) ? std::log(sum[j]) + peak[j] : peak[j]);
    } else {
      std::vector<A> acc(n_out, initial_value<kOp, T>());
      for_each_broadcast(x.shape(), keep, [&](int64_t i, const std::array<int64_t, 1>& o) {
        acc[o[0]] = accumulate<kOp>(acc[o[0]], static_cast<A>(to_compute(in[i])));
      });
      for (int64_t j = 0; j < n_out; ++j) out[j] = finalize<kOp, T>(acc[j], count);
    }
  }

  bool keepdims_;
  bool noop_with_empty_axes_;
  bool axes_from_input_;
  std::vector<int64_t> axes_attr_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "ReduceSum", (1, 11, 13), ReduceKernel<Reduction::kSum>);
PARITY_REGISTER_KERNEL("", "ReduceMean", (1, 11, 13, 18), ReduceKernel<Reduction::kMean>);
PARITY_REGISTER_KERNEL("", "ReduceMax", (1, 11, 12, 13, 18, 20), ReduceKernel<Reduction::kMax>);
PARITY_REGISTER_KERNEL("", "ReduceMin", (1, 11, 12, 13, 18, 20), ReduceKernel<Reduction::kMin>);
PARITY_REGISTER_KERNEL("", "ReduceProd", (1, 11, 13, 18), ReduceKernel<Reduction::kProd>);
PARITY_REGISTER_KERNEL("", "ReduceL1", (1, 11, 13, 18), ReduceKernel<Reduction::kL1>);
PARITY_REGISTER_KERNEL("", "ReduceL2", (1, 11, 13, 18), ReduceKernel<Reduction::kL2>);
PARITY_REGISTER_KERNEL("", "ReduceLogSum", (1, 11, 13, 18), ReduceKernel<Reduction::kLogSum>);
PARITY_REGISTER_KERNEL("", "ReduceLogSumExp", (1, 11, 13, 18), ReduceKernel<Reduction::kLogSumExp>);
PARITY_REGISTER_KERNEL("", "ReduceSumSquare", (1, 11, 13, 18), ReduceKernel<Reduction::kSumSquare>);

}  // namespace parity::runtime::ops
