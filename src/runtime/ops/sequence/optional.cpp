// Spec: https://onnx.ai/onnx/operators/onnx__Optional.html, onnx__OptionalHasElement.html,
//       onnx__OptionalGetElement.html
// Optional, OptionalHasElement, OptionalGetElement.
// An optional holding a value is represented by the value itself; an empty one by Value::none().
#include "runtime/kernel.h"

namespace parity::runtime {
namespace {

class Optional : public Kernel {
 public:
  explicit Optional(const KernelInit&) {}
  void compute(KernelContext& ctx) const override {
    ctx.set_output(0, ctx.has_input(0) ? ctx.input_value(0) : Value::none());
  }
};

class OptionalHasElement : public Kernel {
 public:
  explicit OptionalHasElement(const KernelInit&) {}
  void compute(KernelContext& ctx) const override {
    const bool has = ctx.has_input(0) && !ctx.input_value(0).is_none();
    ctx.set_output(0, Value(Tensor::scalar<bool>(has)));
  }
};

class OptionalGetElement : public Kernel {
 public:
  explicit OptionalGetElement(const KernelInit&) {}
  void compute(KernelContext& ctx) const override {
    if (!ctx.has_input(0) || ctx.input_value(0).is_none()) ctx.fail("the optional input is empty");
    ctx.set_output(0, ctx.input_value(0));
  }
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Optional", 15, Optional);
PARITY_REGISTER_KERNEL("", "OptionalHasElement", 15, OptionalHasElement);
PARITY_REGISTER_KERNEL("", "OptionalGetElement", 15, OptionalGetElement);

}  // namespace parity::runtime
