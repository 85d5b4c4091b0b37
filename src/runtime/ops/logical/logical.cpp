// Spec: https://onnx.ai/onnx/operators/onnx__And.html, onnx__Or.html, onnx__Xor.html,
//       onnx__Not.html, onnx__BitwiseAnd.html, onnx__BitwiseOr.html, onnx__BitwiseXor.html,
//       onnx__BitwiseNot.html, onnx__Equal.html, onnx__Greater.html, onnx__GreaterOrEqual.html,
//       onnx__Less.html, onnx__LessOrEqual.html, onnx__IsNaN.html, onnx__IsInf.html,
//       onnx__Where.html
// Boolean logic, bitwise logic and comparisons.
#include <array>
#include <cmath>
#include <string>

#include <functional>

#include "runtime/ops/common/binary_kernel.h"

namespace parity::runtime::ops {
namespace {

using BoolTypes = TypeList<bool>;
using EqualTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                            uint32_t, uint64_t, bool, std::string>;

struct AndOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = BoolTypes;
  bool operator()(bool a, bool b) const { return a && b; }
};
struct OrOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = BoolTypes;
  bool operator()(bool a, bool b) const { return a || b; }
};
struct XorOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = BoolTypes;
  bool operator()(bool a, bool b) const { return a != b; }
};

/// https://onnx.ai/onnx/operators/onnx__BitwiseAnd.html (and BitwiseOr, BitwiseXor, BitwiseNot;
/// opset 18): two's-complement bit operations on every integer type.
template <typename Bits>
struct BitwiseOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = IntTypes;
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(Bits{}(a, b));
  }
};
using BitwiseAndOp = BitwiseOp<std::bit_and<>>;
using BitwiseOrOp = BitwiseOp<std::bit_or<>>;
using BitwiseXorOp = BitwiseOp<std::bit_xor<>>;

struct BitwiseNotOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = IntTypes;
  template <typename T>
  T operator()(T x) const {
    return static_cast<T>(~x);
  }
};

template <typename T>
decltype(auto) comparable(const T& v) {
  if constexpr (is_half_v<T>) return static_cast<float>(v);
  else return (v);
}

struct EqualOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = EqualTypes;
  template <typename T>
  bool operator()(const T& a, const T& b) const {
    return comparable(a) == comparable(b);
  }
};
struct GreaterOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = NumericTypes;
  template <typename T>
  bool operator()(const T& a, const T& b) const {
    return comparable(a) > comparable(b);
  }
};
struct GreaterOrEqualOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = NumericTypes;
  template <typename T>
  bool operator()(const T& a, const T& b) const {
    return comparable(a) >= comparable(b);
  }
};
struct LessOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = NumericTypes;
  template <typename T>
  bool operator()(const T& a, const T& b) const {
    return comparable(a) < comparable(b);
  }
};
struct LessOrEqualOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = NumericTypes;
  template <typename T>
  bool operator()(const T& a, const T& b) const {
    return comparable(a) <= comparable(b);
  }
};

struct NotOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = BoolTypes;
  bool operator()(bool x) const { return !x; }
};

/// Unary float -> bool predicates.
class IsNaNKernel final : public Kernel {
 public:
  explicit IsNaNKernel(const KernelInit&) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    dispatch_dtype<FloatTypes>(x.dtype(), ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor& y = ctx.allocate_output(0, DType::kBool, x.shape());
      map_unary<T, bool>(ctx, x, y, [](T v) { return std::isnan(to_compute(v)); });
    });
  }
};

class IsInfKernel final : public Kernel {
 public:
  explicit IsInfKernel(const KernelInit& init)
      : negative_(init.attr_int("detect_negative", 1) != 0), positive_(init.attr_int("detect_positive", 1) != 0) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    dispatch_dtype<FloatTypes>(x.dtype(), ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor& y = ctx.allocate_output(0, DType::kBool, x.shape());
      map_unary<T, bool>(ctx, x, y, [this](T v) {
        const auto c = to_compute(v);
        return std::isinf(c) && (c > 0 ? positive_ : negative_);
      });
    });
  }

 private:
  bool negative_, positive_;
};

class WhereKernel final : public Kernel {
 public:
  explicit WhereKernel(const KernelInit&) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& cond = ctx.input(0);
    const Tensor& x = ctx.input(1);
    const Tensor& y = ctx.input(2);
    if (cond.dtype() != DType::kBool) ctx.fail("condition must be bool, got ", dtype_name(cond.dtype()));
    if (x.dtype() != y.dtype())
      ctx.fail("X and Y have different types ", dtype_name(x.dtype()), " and ", dtype_name(y.dtype()));
    const Shape shape = broadcast_shapes(ctx, {cond.shape(), x.shape(), y.shape()});
    visit_dtype(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor& out = ctx.allocate_output(0, x.dtype(), shape);
      const bool* pc = cond.data<bool>();
      const T* px = x.data<T>();
      const T* py = y.data<T>();
      T* po = out.data<T>();
      for_each_broadcast(shape, std::array<Shape, 3>{cond.shape(), x.shape(), y.shape()},
                         [&](int64_t i, const std::array<int64_t, 3>& off) {
                           po[i] = pc[off[0]] ? px[off[1]] : py[off[2]];
                         });
    });
  }
};

}  // namespace

PARITY_REGISTER_KERNEL("", "And", (1, 7), BinaryKernel<AndOp>);
PARITY_REGISTER_KERNEL("", "Or", (1, 7), BinaryKernel<OrOp>);
PARITY_REGISTER_KERNEL("", "Xor", (1, 7), BinaryKernel<XorOp>);
PARITY_REGISTER_KERNEL("", "Not", 1, UnaryKernel<NotOp>);
PARITY_REGISTER_KERNEL("", "BitwiseAnd", 18, BinaryKernel<BitwiseAndOp>);
PARITY_REGISTER_KERNEL("", "BitwiseOr", 18, BinaryKernel<BitwiseOrOp>);
PARITY_REGISTER_KERNEL("", "BitwiseXor", 18, BinaryKernel<BitwiseXorOp>);
PARITY_REGISTER_KERNEL("", "BitwiseNot", 18, UnaryKernel<BitwiseNotOp>);
PARITY_REGISTER_KERNEL("", "Equal", (1, 7, 11, 13), CompareKernel<EqualOp>);
PARITY_REGISTER_KERNEL("", "Greater", (1, 7, 9, 13), CompareKernel<GreaterOp>);
PARITY_REGISTER_KERNEL("", "GreaterOrEqual", (12, 16), CompareKernel<GreaterOrEqualOp>);
PARITY_REGISTER_KERNEL("", "Less", (1, 7, 9, 13), CompareKernel<LessOp>);
PARITY_REGISTER_KERNEL("", "LessOrEqual", (12, 16), CompareKernel<LessOrEqualOp>);
PARITY_REGISTER_KERNEL("", "IsNaN", (9, 13), IsNaNKernel);
PARITY_REGISTER_KERNEL("", "IsInf", 10, IsInfKernel);
PARITY_REGISTER_KERNEL("", "Where", (9, 16), WhereKernel);

}  // namespace parity::runtime::ops
