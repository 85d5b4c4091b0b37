// Spec: https://onnx.ai/onnx/operators/onnx__If.html
// If.
#include "runtime/kernel.h"
#include "runtime/subgraph.h"

namespace parity::runtime {
namespace {

class If : public Kernel {
 public:
  explicit If(const KernelInit& init)
      : then_(init.subgraph("then_branch")), else_(init.subgraph("else_branch")) {
    if (then_->num_outputs() != init.num_outputs() || else_->num_outputs() != init.num_outputs())
      init.fail("the branches have ", then_->num_outputs(), " and ", else_->num_outputs(),
                " outputs but the node has ", init.num_outputs());
  }
  void compute(KernelContext& ctx) const override {
    const Tensor& cond = ctx.input(0);
    if (cond.numel() != 1) ctx.fail("condition must have exactly one element, has ", cond.numel());
    const bool take_then = cond.value_as_double(0) != 0.0;
    std::vector<Value> outputs = ctx.run_subgraph(take_then ? *then_ : *else_, {});
    for (size_t i = 0; i < outputs.size(); ++i)
      if (ctx.has_output(i)) ctx.set_output(i, std::move(outputs[i]));
  }

 private:
  std::shared_ptr<Subgraph> then_, else_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "If", (1, 11, 13, 16), If);

}  // namespace parity::runtime
