// Boolean logic and comparisons: And, Or, Xor, Not, Equal, Greater, GreaterOrEqual, Less,
// LessOrEqual, IsNaN, IsInf, Where. https://github.com/onnx/onnx/blob/main/docs/Operators.md#And
#include <array>
#include <cmath>
#include <string>

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

PARITY_REGISTER_KERNEL("", "And", 1, BinaryKernel<AndOp>);
PARITY_REGISTER_KERNEL("", "And", 7, BinaryKernel<AndOp>);
PARITY_REGISTER_KERNEL("", "Or", 1, BinaryKernel<OrOp>);
PARITY_REGISTER_KERNEL("", "Or", 7, BinaryKernel<OrOp>);
PARITY_REGISTER_KERNEL("", "Xor", 1, BinaryKernel<XorOp>);
PARITY_REGISTER_KERNEL("", "Xor", 7, BinaryKernel<XorOp>);
PARITY_REGISTER_KERNEL("", "Not", 1, UnaryKernel<NotOp>);
PARITY_REGISTER_KERNEL("", "Equal", 1, CompareKernel<EqualOp>);
PARITY_REGISTER_KERNEL("", "Equal", 7, CompareKernel<EqualOp>);
PARITY_REGISTER_KERNEL("", "Greater", 1, CompareKernel<GreaterOp>);
PARITY_REGISTER_KERNEL("", "Greater", 7, CompareKernel<GreaterOp>);
PARITY_REGISTER_KERNEL("", "GreaterOrEqual", 12, CompareKernel<GreaterOrEqualOp>);
PARITY_REGISTER_KERNEL("", "Less", 1, CompareKernel<LessOp>);
PARITY_REGISTER_KERNEL("", "Less", 7, CompareKernel<LessOp>);
PARITY_REGISTER_KERNEL("", "LessOrEqual", 12, CompareKernel<LessOrEqualOp>);
PARITY_REGISTER_KERNEL("", "IsNaN", 9, IsNaNKernel);
PARITY_REGISTER_KERNEL("", "IsInf", 10, IsInfKernel);
PARITY_REGISTER_KERNEL("", "Where", 9, WhereKernel);

// Later schema versions that only widened types or allowed negative axes: same kernel class.
PARITY_REGISTER_KERNEL("", "Equal", 11, CompareKernel<EqualOp>);
PARITY_REGISTER_KERNEL("", "Equal", 13, CompareKernel<EqualOp>);
PARITY_REGISTER_KERNEL("", "Greater", 9, CompareKernel<GreaterOp>);
PARITY_REGISTER_KERNEL("", "Greater", 13, CompareKernel<GreaterOp>);
PARITY_REGISTER_KERNEL("", "GreaterOrEqual", 16, CompareKernel<GreaterOrEqualOp>);
PARITY_REGISTER_KERNEL("", "Less", 9, CompareKernel<LessOp>);
PARITY_REGISTER_KERNEL("", "Less", 13, CompareKernel<LessOp>);
PARITY_REGISTER_KERNEL("", "LessOrEqual", 16, CompareKernel<LessOrEqualOp>);
PARITY_REGISTER_KERNEL("", "IsNaN", 13, IsNaNKernel);
PARITY_REGISTER_KERNEL("", "Where", 16, WhereKernel);

}  // namespace parity::runtime::ops
