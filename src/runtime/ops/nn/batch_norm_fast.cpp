// Spec: https://onnx.ai/onnx/operators/onnx__BatchNormalization.html
// Optimized BatchNormalization (inference, fp32): with constant scale, bias, mean and variance
// the per-channel affine map y = x * a[c] + b[c] is computed once at plan time, with the
// reference kernel's own formula, so the run is one vectorized pass. Training mode, the legacy
// per-element form, non-constant statistics and other dtypes stay with the reference kernel.
//
// A Relu that alone reads the result is fused as a tail (DenseNet's and pre-activation ResNets'
// BatchNormalization -> Relu -> Conv, where the BatchNormalization cannot fold into a preceding
// convolution): each channel row is normalized and rectified while it is in cache, one pass over
// memory instead of two.
#include <cmath>

#include "runtime/ops/common/elementwise_fast.h"
#include "runtime/ops/common/reference_chain.h"

namespace parity::runtime::nn {
namespace {

namespace fast = ops::fast;

class BatchNormalizationFast final : public Kernel, public FusableKernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    if (init.precision() != Precision::kFloat32) return nullptr;
    if (init.opset() >= 14 && init.attr_int("training_mode", 0) != 0) return nullptr;
    for (size_t i = 1; i < init.num_outputs(); ++i)
      if (init.has_output(i)) return nullptr;  // running statistics are a training output
    const DType x_type = init.input_dtype(0);
    if (x_type != DType::kFloat32 && x_type != DType::kUndefined) return nullptr;
    std::vector<std::vector<float>> params;
    for (size_t i = 1; i <= 4; ++i) {
      auto t = init.has_input(i) ? init.constant_input(i) : std::nullopt;
      if (!t || t->dtype() != DType::kFloat32 || t->rank() != 1) return nullptr;
      params.push_back(t->to_vector<float>());
      if (params.back().size() != params.front().size()) return nullptr;
    }
    const float epsilon = init.attr_float("epsilon", 1e-5f);
    const size_t c = params[0].size();
    std::vector<float> scale(c), shift(c);
    for (size_t ch = 0; ch < c; ++ch) {
      // The reference kernel's expressions, in float.
      scale[ch] = params[0][ch] / std::sqrt(params[3][ch] + epsilon);
      shift[ch] = params[1][ch] - params[2][ch] * scale[ch];
    }
    return std::unique_ptr<Kernel>(new BatchNormalizationFast(
        std::move(scale), std::move(shift), ops::ReferenceChain(init.create_reference_kernel(), init.num_inputs())));
  }

  bool fuse_tail(const KernelInit& tail, size_t first_extra_input) override {
    if (relu_ || !tail.spec().domain.empty() || tail.op_type() != "Relu" || tail.num_inputs() != 1) return false;
    relu_ = true;
    reference_.add_tail(tail, first_extra_input);
    return true;
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t c = static_cast<int64_t>(scale_.size());
    if (x.dtype() != DType::kFloat32 || x.rank() < 2 || x.dim(1) != c) {
      reference_.compute(ctx);
      return;
    }
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, x.shape());
    const int64_t rows = x.dim(0) * c;
    if (rows == 0) return;
    const int64_t spatial = x.numel() / rows;
    const float* src = x.data<float>();
    float* dst = y.data<float>();
    const fast::EwLoops& loops = fast::loops();
    const fast::EwUnary relu{fast::EwOp::kRelu, 0.0f, 0.0f};
    const int64_t min_rows = std::max<int64_t>(1, fast::kMinParallelElements / std::max<int64_t>(spatial, 1));
    fast::parallel_chunks(ctx, rows, min_rows, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t ch = row % c;
        loops.scale_shift(src + row * spatial, &scale_[ch], &shift_[ch], dst + row * spatial, 1, spatial);
        if (relu_) loops.unary(relu, dst + row * spatial, dst + row * spatial, spatial);
      }
    });
  }

 private:
  BatchNormalizationFast(std::vector<float> scale, std::vector<float> shift, ops::ReferenceChain reference)
      : scale_(std::move(scale)), shift_(std::move(shift)), reference_(std::move(reference)) {}

  std::vector<float> scale_, shift_;
  ops::ReferenceChain reference_;  // the node's reference kernel, then the fused Relu's
  bool relu_ = false;
};

}  // namespace

PARITY_REGISTER_OPTIMIZED_KERNEL("", "BatchNormalization", (7, 9, 14, 15), BatchNormalizationFast);

}  // namespace parity::runtime::nn
