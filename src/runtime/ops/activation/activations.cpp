// Spec: https://onnx.ai/onnx/operators/onnx__Shrink.html, onnx__Relu.html, onnx__LeakyRelu.html,
//       onnx__Elu.html, onnx__Selu.html, onnx__Celu.html, onnx__Sigmoid.html,
//       onnx__HardSigmoid.html, onnx__HardSwish.html, onnx__Softplus.html, onnx__Softsign.html,
//       onnx__ThresholdedRelu.html, onnx__Mish.html, onnx__Gelu.html, onnx__Swish.html,
//       onnx__SwiGLU.html
// Element-wise activations
// (Relu, LeakyRelu, Elu, Selu, Celu, Sigmoid, HardSigmoid, HardSwish, Softplus, Softsign,
// ThresholdedRelu, Mish, Shrink, Gelu, Swish, SwiGLU). Attributes are read once at plan time.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "runtime/ops/common/binary_kernel.h"
#include "runtime/ops/common/unary_kernel.h"

namespace parity::runtime::ops {
namespace {

using ReluTypes = SignedNumericTypes;  // floats since opset 1, signed ints since 14

struct ReluOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = ReluTypes;
  template <typename C>
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) return x > 0 ? x : C(0);
    else return x > C(0) ? x : (std::isnan(x) ? x : C(0));
  }
};

struct LeakyReluOp {
  using Types = FloatTypes;
  explicit LeakyReluOp(const KernelInit& init) : alpha(init.attr_float("alpha", 0.01f)) {}
  template <typename C>
  C operator()(C x) const {
    return x < C(0) ? C(alpha) * x : x;
  }
  float alpha;
};

struct EluOp {
  using Types = FloatTypes;
  explicit EluOp(const KernelInit& init) : alpha(init.attr_float("alpha", 1.0f)) {}
  template <typename C>
  C operator()(C x) const {
    return x < C(0) ? C(alpha) * (std::exp(x) - C(1)) : x;
  }
  float alpha;
};

struct SeluOp {
  using Types = FloatTypes;
  explicit SeluOp(const KernelInit& init)
      : alpha(init.attr_float("alpha", 1.67326319217681884765625f)),
        gamma(init.attr_float("gamma", 1.05070102214813232421875f)) {}
  template <typename C>
  C operator()(C x) const {
    return x > C(0) ? C(gamma) * x : C(gamma) * (C(alpha) * std::exp(x) - C(alpha));
  }
  float alpha, gamma;
};

struct CeluOp {
  using Types = FloatTypes;
  explicit CeluOp(const KernelInit& init) : alpha(init.attr_float("alpha", 1.0f)) {
    if (alpha == 0.0f) init.fail("attribute 'alpha' must not be 0");
  }
  template <typename C>
  C operator()(C x) const {
    const C a = C(alpha);
    return std::max(C(0), x) + std::min(C(0), a * (std::exp(x / a) - C(1)));
  }
  float alpha;
};

template <typename C>
C sigmoid(C x) {
  // Written so that neither branch overflows exp().
  if (x >= C(0)) return C(1) / (C(1) + std::exp(-x));
  const C e = std::exp(x);
  return e / (C(1) + e);
}

struct SigmoidOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = FloatTypes;
  template <typename C>
  C operator()(C x) const {
    return sigmoid(x);
  }
};

struct HardSigmoidOp {
  using Types = FloatTypes;
  explicit HardSigmoidOp(const KernelInit& init)
      : alpha(init.attr_float("alpha", 0.2f)), beta(init.attr_float("beta", 0.5f)) {}
  template <typename C>
  C operator()(C x) const {
    return std::max(C(0), std::min(C(1), C(alpha) * x + C(beta)));
  }
  float alpha, beta;
};

struct HardSwishOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = FloatTypes;
  template <typename C>
  C operator()(C x) const {
    return x * std::max(C(0), std::min(C(1), x / C(6) + C(0.5)));
  }
};

template <typename C>
C softplus(C x) {
  // log(1 + exp(x)) without overflow for large x.
  return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

struct SoftplusOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = FloatTypes;
  template <typename C>
  C operator()(C x) const {
    return softplus(x);
  }
};

struct SoftsignOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = FloatTypes;
  template <typename C>
  C operator()(C x) const {
    return x / (C(1) + std::fabs(x));
  }
};

struct ThresholdedReluOp {
  using Types = FloatTypes;
  explicit ThresholdedReluOp(const KernelInit& init) : alpha(init.attr_float("alpha", 1.0f)) {}
  template <typename C>
  C operator()(C x) const {
    return x > C(alpha) ? x : C(0);
  }
  float alpha;
};

struct MishOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = FloatTypes;
  template <typename C>
  C operator()(C x) const {
    return x * std::tanh(softplus(x));
  }
};

// Shrink is defined for every numeric type; integers are shifted in double and truncated back,
// as the reference evaluator does (numpy promotes to float64, then astype).
struct ShrinkOp {
  using Types = NumericTypes;
  explicit ShrinkOp(const KernelInit& init)
      : lambd(init.attr_float("lambd", 0.5f)), bias(init.attr_float("bias", 0.0f)) {}
  template <typename C>
  C operator()(C x) const {
    const double v = static_cast<double>(x);
    if (v < -static_cast<double>(lambd)) return static_cast<C>(v + bias);
    if (v > static_cast<double>(lambd)) return static_cast<C>(v - bias);
    return C(0);
  }
  float lambd;
  float bias;
};

/// https://onnx.ai/onnx/operators/onnx__Gelu.html (opset 20): exact erf form, or the tanh
/// approximation when approximate="tanh".
struct GeluOp {
  using Types = FloatTypes;
  explicit GeluOp(const KernelInit& init) {
    const std::string mode = init.attr_string("approximate", "none");
    if (mode == "tanh") tanh_approximation = true;
    else if (mode != "none") init.fail("attribute 'approximate' must be \"none\" or \"tanh\", got \"", mode, "\"");
  }
  template <typename C>
  C operator()(C x) const {
    if (tanh_approximation) {
      const C k = static_cast<C>(0.79788456080286535588);  // sqrt(2 / pi)
      return C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
    }
    return C(0.5) * x * (C(1) + std::erf(x * static_cast<C>(0.70710678118654752440)));  // x / sqrt(2)
  }
  bool tanh_approximation = false;
};

/// https://onnx.ai/onnx/operators/onnx__Swish.html (opset 24): x * sigmoid(alpha * x).
struct SwishOp {
  using Types = FloatTypes;
  explicit SwishOp(const KernelInit& init) : alpha(init.attr_float("alpha", 1.0f)) {}
  template <typename C>
  C operator()(C x) const {
    return x * sigmoid(C(alpha) * x);
  }
  float alpha;
};

/// https://onnx.ai/onnx/operators/onnx__SwiGLU.html (opset 28): Swish(a, alpha) * b, broadcast.
struct SwiGluOp {
  using Types = FloatTypes;
  explicit SwiGluOp(const KernelInit& init) : alpha(init.attr_float("alpha", 1.0f)) {}
  template <typename T>
  T operator()(T a, T b) const {
    const auto x = to_compute(a);
    using C = decltype(x);
    return from_compute<T>(x * sigmoid(C(alpha) * x) * to_compute(b));
  }
  float alpha;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Shrink", 9, UnaryKernel<ShrinkOp>);
PARITY_REGISTER_KERNEL("", "Relu", (1, 6, 13, 14), UnaryKernel<ReluOp>);
PARITY_REGISTER_KERNEL("", "LeakyRelu", (1, 6, 16), UnaryKernel<LeakyReluOp>);
PARITY_REGISTER_KERNEL("", "Elu", (1, 6), UnaryKernel<EluOp>);
PARITY_REGISTER_KERNEL("", "Selu", (1, 6), UnaryKernel<SeluOp>);
PARITY_REGISTER_KERNEL("", "Celu", 12, UnaryKernel<CeluOp>);
PARITY_REGISTER_KERNEL("", "Sigmoid", (1, 6, 13), UnaryKernel<SigmoidOp>);
PARITY_REGISTER_KERNEL("", "HardSigmoid", (1, 6), UnaryKernel<HardSigmoidOp>);
PARITY_REGISTER_KERNEL("", "HardSwish", 14, UnaryKernel<HardSwishOp>);
PARITY_REGISTER_KERNEL("", "Softplus", 1, UnaryKernel<SoftplusOp>);
PARITY_REGISTER_KERNEL("", "Softsign", 1, UnaryKernel<SoftsignOp>);
PARITY_REGISTER_KERNEL("", "ThresholdedRelu", 10, UnaryKernel<ThresholdedReluOp>);
PARITY_REGISTER_KERNEL("", "Mish", 18, UnaryKernel<MishOp>);
PARITY_REGISTER_KERNEL("", "Gelu", 20, UnaryKernel<GeluOp>);
PARITY_REGISTER_KERNEL("", "Swish", 24, UnaryKernel<SwishOp>);
PARITY_REGISTER_KERNEL("", "SwiGLU", 28, BinaryKernel<SwiGluOp>);

}  // namespace parity::runtime::ops
