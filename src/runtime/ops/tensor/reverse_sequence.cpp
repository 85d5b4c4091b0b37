// Spec: https://onnx.ai/onnx/operators/onnx__ReverseSequence.html
// ReverseSequence.
#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime {
namespace {

class ReverseSequenceKernel final : public Kernel {
 public:
  explicit ReverseSequenceKernel(const KernelInit& init)
      : batch_axis_(init.attr_int("batch_axis", 1)), time_axis_(init.attr_int("time_axis", 0)) {
    if (!((batch_axis_ == 0 && time_axis_ == 1) || (batch_axis_ == 1 && time_axis_ == 0)))
      init.fail("batch_axis and time_axis must be 0 and 1 in some order, got ", batch_axis_, " and ", time_axis_);
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() < 2) ctx.fail("input must have rank >= 2, got shape ", shape_to_string(x.shape()));
    const std::vector<int64_t> lens = ops::read_int_values(ctx, ctx.input(1), "sequence_lens");
    const int64_t batch = x.shape()[batch_axis_];
    const int64_t time = x.shape()[time_axis_];
    if (static_cast<int64_t>(lens.size()) != batch)
      ctx.fail("sequence_lens has ", lens.size(), " entries for a batch of ", batch);
    for (int64_t len : lens)
      if (len < 0 || len > time) ctx.fail("sequence length ", len, " is out of range [0, ", time, "]");
    int64_t inner = 1;
    for (int64_t d = 2; d < x.rank(); ++d) inner *= x.shape()[d];
    const std::vector<int64_t> strides = shape_strides(x.shape());
    Tensor& out = ctx.allocate_output(0, x.dtype(), x.shape());
    tensor_ops::visit_storage_type(x.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      const S* src = tensor_ops::elements<S>(x);
      S* dst = tensor_ops::elements<S>(out);
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t t = 0; t < time; ++t) {
          const int64_t from = t < lens[b] ? lens[b] - 1 - t : t;
          const S* block = src + b * strides[batch_axis_] + from * strides[time_axis_];
          std::copy(block, block + inner, dst + b * strides[batch_axis_] + t * strides[time_axis_]);
        }
    });
  }

 private:
  int64_t batch_axis_;
  int64_t time_axis_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "ReverseSequence", 10, ReverseSequenceKernel);

}  // namespace parity::runtime
