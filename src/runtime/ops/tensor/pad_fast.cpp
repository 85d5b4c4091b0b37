// Spec: https://onnx.ai/onnx/operators/onnx__Pad.html
// Optimized Pad for the Pad that pads nothing (constant pads, all zero): its output is its input,
// handed on without a copy, in whichever layout the input arrives. DenseNet's torchvision export
// puts one before each transition's AveragePool (1x128x56x56, 1x256x28x28, 1x512x14x14); the
// reference kernel copied the map, and, being no channels-last kernel, made the transition
// convolution write NCHW (a oneDNN reorder each). Passing channels-last through (as Slice does:
// only where its output is handed off too), the convolution writes channels-last straight to the
// AveragePool. Pads from attributes (opsets 1 and 2), an axes input, a constant_value input or any
// nonzero pad: the reference kernel.
#include "runtime/channels_last.h"
#include "runtime/kernel.h"

namespace parity::runtime {
namespace {

class UnpaddedPad final : public Kernel, public ChannelsLastKernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    auto reference = init.create_reference_kernel();  // validates the mode
    if (init.opset() < 11 || init.has_input(2) || init.has_input(3)) return nullptr;
    const std::optional<Tensor> pads = init.has_input(1) ? init.constant_input(1) : std::nullopt;
    if (!pads || pads->dtype() != DType::kInt64 || pads->rank() != 1) return nullptr;
    for (int64_t p : pads->to_vector<int64_t>())
      if (p != 0) return nullptr;
    return std::unique_ptr<Kernel>(new UnpaddedPad(pads->numel(), std::move(reference)));
  }

  bool can_read_channels_last(size_t input) const override { return input == 0; }
  void read_channels_last(size_t input) override { channels_last_input_ = channels_last_input_ || input == 0; }
  bool can_write_channels_last() const override { return channels_last_input_; }
  void write_channels_last() override {}  // the output is the input, in its layout
  bool passes_layout_through() const override { return true; }

  void compute(KernelContext& ctx) const override {
    const Value& x = ctx.input_value(0);
    // A pads list that does not fit the rank: the reference kernel reports it.
    if (!x.is_tensor() || num_pads_ != 2 * x.tensor().rank()) {
      reference_->compute(ctx);
      return;
    }
    ctx.set_output(0, x);
  }

 private:
  UnpaddedPad(int64_t num_pads, std::unique_ptr<Kernel> reference)
      : num_pads_(num_pads), reference_(std::move(reference)) {}

  int64_t num_pads_;
  std::unique_ptr<Kernel> reference_;
  bool channels_last_input_ = false;
};

}  // namespace

PARITY_REGISTER_OPTIMIZED_KERNEL("", "Pad", (11, 18, 19), UnpaddedPad);

}  // namespace parity::runtime
