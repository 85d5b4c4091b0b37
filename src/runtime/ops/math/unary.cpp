// Spec: https://onnx.ai/onnx/operators/onnx__Abs.html, onnx__Neg.html, onnx__Sign.html,
//       onnx__Reciprocal.html, onnx__Floor.html, onnx__Ceil.html, onnx__Round.html, onnx__Sqrt.html,
//       onnx__Exp.html, onnx__Log.html, onnx__Sin.html, onnx__Cos.html, onnx__Tan.html,
//       onnx__Asin.html, onnx__Acos.html, onnx__Atan.html, onnx__Sinh.html, onnx__Cosh.html,
//       onnx__Tanh.html, onnx__Asinh.html, onnx__Acosh.html, onnx__Atanh.html, onnx__Erf.html
// Element-wise unary math
// (Abs, Neg, Reciprocal, Floor, Ceil, Round, Sqrt, Exp, Log, trigonometric and hyperbolic
// functions, Sign, Erf). Integer variants wrap around like numpy.
#include <cmath>
#include <type_traits>

#include "runtime/ops/common/unary_kernel.h"

namespace parity::runtime::ops {
namespace {

template <typename C>
constexpr bool kUnaryIsInt = std::is_integral_v<C>;

struct AbsOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = NumericTypes;
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else if constexpr (kUnaryIsInt<C>) {
      return x < 0 ? wrap_sub(C(0), x) : x;  // abs(INT_MIN) wraps to INT_MIN like numpy
    } else {
      return std::fabs(x);
    }
  }
};

struct NegOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = SignedNumericTypes;
  template <typename C>
  C operator()(C x) const {
    if constexpr (kUnaryIsInt<C>) return wrap_sub(C(0), x);
    else return -x;
  }
};

struct SignOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = NumericTypes;
  template <typename C>
  C operator()(C x) const {
    if constexpr (!kUnaryIsInt<C>) {
      if (std::isnan(x)) return x;
    }
    return x > C(0) ? C(1) : (x < C(0) ? C(-1) : C(0));
  }
};

#define PARITY_FLOAT_UNARY_OP(Name, expr)  \
  struct Name : NoAttrs {                  \
    using NoAttrs::NoAttrs;                \
    using Types = FloatTypes;              \
    template <typename C>                  \
    C operator()(C x) const {              \
      return expr;                         \
    }                                      \
  };

PARITY_FLOAT_UNARY_OP(ReciprocalOp, C(1) / x)
PARITY_FLOAT_UNARY_OP(FloorOp, std::floor(x))
PARITY_FLOAT_UNARY_OP(CeilOp, std::ceil(x))
// nearbyint honours the default rounding mode, round-half-to-even, as the spec requires.
PARITY_FLOAT_UNARY_OP(RoundOp, std::nearbyint(x))
PARITY_FLOAT_UNARY_OP(SqrtOp, std::sqrt(x))
PARITY_FLOAT_UNARY_OP(ExpOp, std::exp(x))
PARITY_FLOAT_UNARY_OP(LogOp, std::log(x))
PARITY_FLOAT_UNARY_OP(SinOp, std::sin(x))
PARITY_FLOAT_UNARY_OP(CosOp, std::cos(x))
PARITY_FLOAT_UNARY_OP(TanOp, std::tan(x))
PARITY_FLOAT_UNARY_OP(AsinOp, std::asin(x))
PARITY_FLOAT_UNARY_OP(AcosOp, std::acos(x))
PARITY_FLOAT_UNARY_OP(AtanOp, std::atan(x))
PARITY_FLOAT_UNARY_OP(SinhOp, std::sinh(x))
PARITY_FLOAT_UNARY_OP(CoshOp, std::cosh(x))
PARITY_FLOAT_UNARY_OP(TanhOp, std::tanh(x))
PARITY_FLOAT_UNARY_OP(AsinhOp, std::asinh(x))
PARITY_FLOAT_UNARY_OP(AcoshOp, std::acosh(x))
PARITY_FLOAT_UNARY_OP(AtanhOp, std::atanh(x))
#undef PARITY_FLOAT_UNARY_OP

// Erf accepts every numeric type since opset 13; integers go through double.
struct ErfOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = NumericTypes;
  template <typename C>
  C operator()(C x) const {
    if constexpr (kUnaryIsInt<C>) return static_cast<C>(std::erf(static_cast<double>(x)));
    else return std::erf(x);
  }
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Abs", (1, 6, 13), UnaryKernel<AbsOp>);
PARITY_REGISTER_KERNEL("", "Neg", (1, 6, 13), UnaryKernel<NegOp>);
PARITY_REGISTER_KERNEL("", "Sign", (9, 13), UnaryKernel<SignOp>);
PARITY_REGISTER_KERNEL("", "Reciprocal", (1, 6, 13), UnaryKernel<ReciprocalOp>);
PARITY_REGISTER_KERNEL("", "Floor", (1, 6, 13), UnaryKernel<FloorOp>);
PARITY_REGISTER_KERNEL("", "Ceil", (1, 6, 13), UnaryKernel<CeilOp>);
PARITY_REGISTER_KERNEL("", "Round", 11, UnaryKernel<RoundOp>);
PARITY_REGISTER_KERNEL("", "Sqrt", (1, 6, 13), UnaryKernel<SqrtOp>);
PARITY_REGISTER_KERNEL("", "Exp", (1, 6, 13), UnaryKernel<ExpOp>);
PARITY_REGISTER_KERNEL("", "Log", (1, 6, 13), UnaryKernel<LogOp>);
PARITY_REGISTER_KERNEL("", "Sin", 7, UnaryKernel<SinOp>);
PARITY_REGISTER_KERNEL("", "Cos", 7, UnaryKernel<CosOp>);
PARITY_REGISTER_KERNEL("", "Tan", 7, UnaryKernel<TanOp>);
PARITY_REGISTER_KERNEL("", "Asin", 7, UnaryKernel<AsinOp>);
PARITY_REGISTER_KERNEL("", "Acos", 7, UnaryKernel<AcosOp>);
PARITY_REGISTER_KERNEL("", "Atan", 7, UnaryKernel<AtanOp>);
PARITY_REGISTER_KERNEL("", "Sinh", 9, UnaryKernel<SinhOp>);
PARITY_REGISTER_KERNEL("", "Cosh", 9, UnaryKernel<CoshOp>);
PARITY_REGISTER_KERNEL("", "Tanh", (1, 6, 13), UnaryKernel<TanhOp>);
PARITY_REGISTER_KERNEL("", "Asinh", 9, UnaryKernel<AsinhOp>);
PARITY_REGISTER_KERNEL("", "Acosh", 9, UnaryKernel<AcoshOp>);
PARITY_REGISTER_KERNEL("", "Atanh", 9, UnaryKernel<AtanhOp>);
PARITY_REGISTER_KERNEL("", "Erf", (9, 13), UnaryKernel<ErfOp>);

}  // namespace parity::runtime::ops
