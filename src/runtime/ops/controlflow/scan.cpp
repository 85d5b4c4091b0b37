// Spec: https://onnx.ai/onnx/operators/onnx__Scan.html
// Scan (Scan-8 has a batch axis and sequence_lens; Scan-9 and later scan along configurable axes
// and directions).
#include <algorithm>

#include "runtime/kernel.h"
#include "runtime/subgraph.h"
#include "runtime/tensor_util.h"

namespace parity::runtime {
namespace {

class Scan : public Kernel {
 public:
  explicit Scan(const KernelInit& init) : body_(init.subgraph("body")) {
    batched_ = init.spec().since_version < 9;
    num_scan_inputs_ = init.attr_int("num_scan_inputs");
    const int64_t first = batched_ ? 1 : 0;  // Scan-8: input 0 is sequence_lens
    const int64_t total = static_cast<int64_t>(init.num_inputs()) - first;
    num_state_ = total - num_scan_inputs_;
    if (num_state_ < 0) init.fail("num_scan_inputs ", num_scan_inputs_, " exceeds the number of inputs");
    num_scan_outputs_ = static_cast<int64_t>(init.num_outputs()) - num_state_;
    if (static_cast<int64_t>(body_->num_inputs()) != num_state_ + num_scan_inputs_ ||
        static_cast<int64_t>(body_->num_outputs()) != num_state_ + num_scan_outputs_)
      init.fail("the body's inputs/outputs do not match the node's state and scan values");
    input_axes_ = init.attr_ints("scan_input_axes", std::vector<int64_t>(num_scan_inputs_, 0));
    input_dirs_ = init.attr_ints(batched_ ? "directions" : "scan_input_directions",
                                 std::vector<int64_t>(num_scan_inputs_, 0));
    output_axes_ = init.attr_ints("scan_output_axes", std::vector<int64_t>(num_scan_outputs_, 0));
    output_dirs_ = init.attr_ints("scan_output_directions", std::vector<int64_t>(num_scan_outputs_, 0));
    if (static_cast<int64_t>(input_axes_.size()) != num_scan_inputs_ ||
        static_cast<int64_t>(input_dirs_.size()) != num_scan_inputs_ ||
        static_cast<int64_t>(output_axes_.size()) != num_scan_outputs_ ||
        static_cast<int64_t>(output_dirs_.size()) != num_scan_outputs_)
      init.fail("scan axes/directions attributes have the wrong length");
  }

  void compute(KernelContext& ctx) const override {
    if (!batched_) {
      std::vector<Value> states, scans;
      for (int64_t i = 0; i < num_state_; ++i) states.push_back(ctx.input_value(i));
      for (int64_t i = 0; i < num_scan_inputs_; ++i) scans.push_back(ctx.input_value(num_state_ + i));
      auto [final_states, outputs] = run_one(ctx, states, scans, -1, 0);
      for (int64_t i = 0; i < num_state_; ++i) ctx.set_output(i, Value(final_states[i]));
      for (int64_t k = 0; k < num_scan_outputs_; ++k) ctx.set_output(num_state_ + k, Value(outputs[k]));
      return;
    }
    // Scan-8: run each batch entry separately (axis 1 is the sequence axis), then stack.
    if (ctx.input(1).rank() < 1) ctx.fail("input 1 is a scalar; Scan-8 needs the batch size as its first dim");
    const int64_t batch = ctx.input(1).dim(0);
    for (int64_t i = 1; i <= num_state_ + num_scan_inputs_; ++i)
      if (ctx.input(i).rank() < 1 || ctx.input(i).dim(0) != batch)
        ctx.fail("input ", i, " has shape ", shape_to_string(ctx.input(i).shape()), "; Scan-8 needs the batch size ",
                 batch, " as its first dim");
    if (ctx.has_input(0) && ctx.input(0).numel() != batch)
      ctx.fail("sequence_lens has ", ctx.input(0).numel(), " values for a batch of ", batch);
    std::vector<std::vector<Tensor>> state_parts(num_state_), output_parts(num_scan_outputs_);
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Value> states, scans;
      for (int64_t i = 0; i < num_state_; ++i) states.emplace_back(take_axis(ctx.input(1 + i), 0, b));
      for (int64_t i = 0; i < num_scan_inputs_; ++i) scans.emplace_back(take_axis(ctx.input(1 + num_state_ + i), 0, b));
      int64_t length = -1;
      if (ctx.has_input(0)) length = static_cast<int64_t>(ctx.input(0).value_as_double(b));
      auto [final_states, outputs] = run_one(ctx, states, scans, length, 0);
      for (int64_t i = 0; i < num_state_; ++i) state_parts[i].push_back(final_states[i]);
      for (int64_t k = 0; k < num_scan_outputs_; ++k) output_parts[k].push_back(outputs[k]);
    }
    for (int64_t i = 0; i < num_state_; ++i)
      ctx.set_output(i, Value(stack_tensors(state_parts[i], 0, ctx.node_label(), {.node = ctx.node_error_name()})));
    for (int64_t k = 0; k < num_scan_outputs_; ++k)
      ctx.set_output(num_state_ + k, Value(stack_tensors(output_parts[k], 0, ctx.node_label(), {.node = ctx.node_error_name()})));
  }

 private:
  std::pair<std::vector<Tensor>, std::vector<Tensor>> run_one(KernelContext& ctx, std::vector<Value> states,
                                                              const std::vector<Value>& scans, int64_t length,
                                                              int) const {
    std::vector<int64_t> axes(num_scan_inputs_);
    int64_t seq_len = length;
    for (int64_t i = 0; i < num_scan_inputs_; ++i) {
      const Tensor& t = scans[i].tensor();
      int64_t axis = input_axes_[i] < 0 ? input_axes_[i] + t.rank() : input_axes_[i];
      if (axis < 0 || axis >= t.rank()) ctx.fail("scan_input_axes[", i, "] is out of range for rank ", t.rank());
      axes[i] = axis;
      const int64_t n = t.shape()[axis];
      if (length > n) ctx.fail("sequence length ", length, " is longer than scan input ", i, "'s ", n, " steps");
      if (length < 0) {
        if (seq_len >= 0 && seq_len != n) ctx.fail("scan inputs have different sequence lengths (", seq_len, " and ", n, ")");
        seq_len = n;
      }
    }
    if (seq_len < 0) seq_len = 0;
    std::vector<std::vector<Tensor>> outs(num_scan_outputs_);
    for (int64_t t = 0; t < seq_len; ++t) {
      std::vector<Value> inputs = states;
      for (int64_t i = 0; i < num_scan_inputs_; ++i) {
        const Tensor& x = scans[i].tensor();
        const int64_t idx = input_dirs_[i] ? x.shape()[axes[i]] - 1 - t : t;
        inputs.emplace_back(take_axis(x, axes[i], idx));
      }
      std::vector<Value> out = ctx.run_subgraph(*body_, std::move(inputs));
      for (int64_t i = 0; i < num_state_; ++i) states[i] = out[i];
      for (int64_t k = 0; k < num_scan_outputs_; ++k) outs[k].push_back(out[num_state_ + k].tensor());
    }
    std::vector<Tensor> final_states, outputs;
    for (auto& s : states) final_states.push_back(s.tensor());
    for (int64_t k = 0; k < num_scan_outputs_; ++k) {
      if (outs[k].empty()) {
        DType d = body_->output_meta()[num_state_ + k].dtype;
        outputs.emplace_back(d == DType::kUndefined ? DType::kFloat32 : compute_dtype(d, ctx.precision()), Shape{0});
        continue;
      }
      if (output_dirs_[k]) std::reverse(outs[k].begin(), outs[k].end());
      const int64_t rank = outs[k].front().rank() + 1;
      const int64_t axis = output_axes_[k] < 0 ? output_axes_[k] + rank : output_axes_[k];
      if (axis < 0 || axis >= rank) ctx.fail("scan_output_axes[", k, "] is out of range");
      outputs.push_back(stack_tensors(outs[k], axis, ctx.node_label(), {.node = ctx.node_error_name()}));
    }
    return {final_states, outputs};
  }

  std::shared_ptr<Subgraph> body_;
  bool batched_ = false;
  int64_t num_scan_inputs_ = 0, num_state_ = 0, num_scan_outputs_ = 0;
  std::vector<int64_t> input_axes_, input_dirs_, output_axes_, output_dirs_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Scan", (8, 9, 11, 16), Scan);

}  // namespace parity::runtime
