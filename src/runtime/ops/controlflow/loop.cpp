// Spec: https://onnx.ai/onnx/operators/onnx__Loop.html
// Loop.
#include "runtime/kernel.h"
#include "runtime/subgraph.h"
#include "runtime/tensor_util.h"

namespace parity::runtime {
namespace {

class Loop : public Kernel {
 public:
  explicit Loop(const KernelInit& init) : body_(init.subgraph("body")) {
    const size_t carried = init.num_inputs() >= 2 ? init.num_inputs() - 2 : 0;
    if (body_->num_inputs() != carried + 2)
      init.fail("the body takes ", body_->num_inputs(), " inputs but the node has ", carried,
                " loop-carried values (the body needs 2 + that many)");
    if (body_->num_outputs() < carried + 1)
      init.fail("the body has ", body_->num_outputs(), " outputs but needs at least ", carried + 1);
    carried_ = carried;
    scan_outputs_ = body_->num_outputs() - 1 - carried;
  }

  void compute(KernelContext& ctx) const override {
    int64_t max_trips = -1;
    if (ctx.has_input(0)) {
      const Tensor& m = ctx.input(0);
      if (m.numel() != 1) ctx.fail("M must have one element");
      max_trips = static_cast<int64_t>(m.value_as_double(0));
    }
    bool cond = true;
    if (ctx.has_input(1)) {
      const Tensor& c = ctx.input(1);
      if (c.numel() != 1) ctx.fail("cond must have one element");
      cond = c.value_as_double(0) != 0.0;
    }
    std::vector<Value> carried;
    for (size_t i = 0; i < carried_; ++i) carried.push_back(ctx.has_input(i + 2) ? ctx.input_value(i + 2) : Value::none());
    std::vector<std::vector<Tensor>> scans(scan_outputs_);
    int64_t iter = 0;
    for (; (max_trips < 0 || iter < max_trips) && cond; ++iter) {
      std::vector<Value> inputs;
      inputs.emplace_back(Tensor::scalar<int64_t>(iter));
      inputs.emplace_back(Tensor::scalar<bool>(cond));
      for (auto& v : carried) inputs.push_back(v);
      std::vector<Value> out = ctx.run_subgraph(*body_, std::move(inputs));
      if (!out[0].is_tensor() || out[0].tensor().numel() != 1) ctx.fail("the body's condition output must be a one-element tensor");
      cond = out[0].tensor().value_as_double(0) != 0.0;
      for (size_t i = 0; i < carried_; ++i) carried[i] = std::move(out[1 + i]);
      for (size_t k = 0; k < scan_outputs_; ++k) {
        const Value& v = out[1 + carried_ + k];
        if (!v.is_tensor()) ctx.fail("scan output ", k, " of the body must be a tensor");
        scans[k].push_back(v.tensor());
      }
    }
    for (size_t i = 0; i < carried_; ++i)
      if (ctx.has_output(i)) ctx.set_output(i, std::move(carried[i]));
    for (size_t k = 0; k < scan_outputs_; ++k) {
      if (!ctx.has_output(carried_ + k)) continue;
      if (scans[k].empty()) {
        // No iteration ran: an empty tensor of the body's declared dtype.
        DType d = body_->output_meta()[1 + carried_ + k].dtype;
        if (d == DType::kUndefined) d = DType::kFloat32;
        ctx.allocate_output(carried_ + k, compute_dtype(d, ctx.precision()), {0});
        continue;
      }
      ctx.set_output(carried_ + k, Value(stack_tensors(scans[k], 0, ctx.node_label() + " scan output",
                                                           {.node = ctx.node_error_name()})));
    }
  }

 private:
  std::shared_ptr<Subgraph> body_;
  size_t carried_ = 0;
  size_t scan_outputs_ = 0;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Loop", (1, 11, 13, 16), Loop);

}  // namespace parity::runtime
