// Spec: none (parity's own "ai.parity" domain: each kernel repeats the chain it replaces)
// Activations that exporters write as chains of elementwise nodes, recognized by the planner's
// activation rewrite (runtime/activation_rewrite.h) and run as one node in parity's private
// domain "ai.parity". Each reference kernel repeats the chain's own float operations in the same
// order, so it rounds exactly as the chain does.
#include <cmath>

#include "runtime/ops/common/unary_kernel.h"

namespace parity::runtime::ops {
namespace {

/// Div(Mul(x, Clip(Add(x, 3), 0, 6)), 6): torch's and Paddle's HardSwish export.
struct ChainHardSwishOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = FloatTypes;
  template <typename C>
  C operator()(C x) const {
    const C clipped = std::min(std::max(x + C(3), C(0)), C(6));
    return (x * clipped) / C(6);
  }
};

/// Mul(Mul(x, Add(Erf(Div(x, sqrt(2))), 1)), 0.5): torch's exact GELU export.
struct ChainGeluOp {
  using Types = FloatTypes;
  explicit ChainGeluOp(const KernelInit& init) : sqrt2(init.attr_float("sqrt2", 1.41421356f)) {}
  template <typename C>
  C operator()(C x) const {
    return (x * (std::erf(x / C(sqrt2)) + C(1))) * C(0.5);
  }
  float sqrt2;  // the divisor exactly as the model stores it
};

/// Mul(x, Sigmoid(x)): torch's SiLU export. The sigmoid is the reference Sigmoid's expression.
struct ChainSiluOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = FloatTypes;
  template <typename C>
  C operator()(C x) const {
    if (x >= C(0)) return x * (C(1) / (C(1) + std::exp(-x)));
    const C e = std::exp(x);
    return x * (e / (C(1) + e));
  }
};

}  // namespace

PARITY_REGISTER_KERNEL("ai.parity", "HardSwish", 1, UnaryKernel<ChainHardSwishOp>);
PARITY_REGISTER_KERNEL("ai.parity", "Swish", 1, UnaryKernel<ChainSiluOp>);
PARITY_REGISTER_KERNEL("ai.parity", "Gelu", 1, UnaryKernel<ChainGeluOp>);

}  // namespace parity::runtime::ops
