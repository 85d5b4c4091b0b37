// Identity (tensors, sequences, optionals): https://onnx.ai/onnx/operators/onnx__Identity.html
#include "runtime/kernel.h"

namespace parity::runtime {
namespace {

class Identity : public Kernel {
 public:
  explicit Identity(const KernelInit&) {}
  void compute(KernelContext& ctx) const override { ctx.set_output(0, ctx.input_value(0)); }
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Identity", 1, Identity);
PARITY_REGISTER_KERNEL("", "Identity", 13, Identity);
PARITY_REGISTER_KERNEL("", "Identity", 14, Identity);
PARITY_REGISTER_KERNEL("", "Identity", 16, Identity);

}  // namespace parity::runtime
