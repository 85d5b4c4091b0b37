// Spec: https://onnx.ai/onnx/operators/onnx__Dropout.html
// Dropout.
// Before opset 12 Dropout is an identity at inference (what every runtime does). From opset 12
// the training_mode input enables dropping; the mask is drawn like numpy's
// RandomState(seed).uniform(0, 1) >= ratio, so a 'seed' attribute reproduces the ONNX reference.
#include "core/random_state.h"
#include "runtime/ops/nn/nn_common.h"

namespace parity::runtime::nn {
namespace {

class DropoutKernel : public Kernel {
 public:
  explicit DropoutKernel(const KernelInit& init) : opset_(init.opset()) {
    if (init.has_attr("seed")) seed_ = init.attr_int("seed");
    if (opset_ < 12) ratio_attr_ = init.attr_float("ratio", 0.5f);
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    double ratio = ratio_attr_;
    bool training = false;
    if (opset_ >= 12) {
      if (ctx.has_input(1)) ratio = scalar_double(ctx, 1, "ratio");
      if (ctx.has_input(2)) training = scalar_int64(ctx, 2, "training_mode") != 0;
    }
    if (ratio < 0 || ratio >= 1) ctx.fail("ratio must be in [0, 1), got ", ratio);
    // Mask dtype: the data type before opset 10, bool from then on.
    const DType mask_dtype = opset_ < 10 ? x.dtype() : DType::kBool;
    if (!training || ratio == 0) {
      ctx.set_output(0, Value(x));
      if (ctx.has_output(1)) {
        Tensor& mask = ctx.allocate_output(1, mask_dtype, x.shape());
        store_to(mask, std::vector<double>(static_cast<size_t>(x.numel()), 1.0));
      }
      return;
    }
    const uint64_t seed = seed_ ? static_cast<uint64_t>(*seed_) : ctx.next_random_seed();
    NumpyRandomState rng(static_cast<uint32_t>(seed));
    std::vector<double> keep(static_cast<size_t>(x.numel()));
    for (auto& k : keep) k = rng.random_sample() >= ratio ? 1.0 : 0.0;
    visit_float_compute(x.dtype(), ctx, [&](auto tag) {
      using A = typename decltype(tag)::type;
      AccInput<A> xv(x);
      AccOutput<A> y(ctx, 0, x.dtype(), x.shape());
      const A scale = static_cast<A>(1.0 / (1.0 - ratio));
      for (int64_t i = 0; i < x.numel(); ++i) y[i] = keep[i] != 0 ? xv[i] * scale : A(0);
      y.finish();
    });
    if (ctx.has_output(1)) store_to(ctx.allocate_output(1, mask_dtype, x.shape()), keep);
  }

 private:
  int opset_;
  std::optional<int64_t> seed_;
  double ratio_attr_ = 0.5;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Dropout", (1, 6, 7, 10, 12, 13), DropoutKernel);

}  // namespace parity::runtime::nn
