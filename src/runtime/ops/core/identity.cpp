// Spec: https://onnx.ai/onnx/operators/onnx__Identity.html
// Identity (tensors, sequences, optionals).
#include "runtime/kernel.h"

namespace parity::runtime {
namespace {

class Identity : public Kernel {
 public:
  explicit Identity(const KernelInit&) {}
  void compute(KernelContext& ctx) const override { ctx.set_output(0, ctx.input_value(0)); }
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Identity", (1, 13, 14, 16), Identity);

}  // namespace parity::runtime
