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
//
// Channels-last hand-off (runtime/channels_last.h): DenseNet's BatchNormalization reads the
// Concat of the convolutions before it and feeds a convolution; reading and writing that map
// channels-last (each pixel's channels scaled and shifted) lets the whole dense block stay
// channels-last, where before every dense layer converted its Concat to channels-last for its
// first convolution and its last convolution's output back (124 layout conversions per run).
// Like Concat, it reads channels-last only where its output is handed off too.
//
// Where its input stays NCHW (DenseNet's Concats share NCHW buffers, runtime/rewrites/
// concat_placement.h) and a convolution reads its output, it writes channels-last anyway: the
// layout change rides on the normalizing pass (ops/nn/batch_norm_layout.h) instead of the
// convolution reordering its input. DenseNet-121 at 1 thread: the 61 NCHW -> channels-last
// reorders oneDNN ran before its 1x1 convolutions (ONEDNN_VERBOSE) read and wrote every dense
// layer's input (84 MB a run) once more after the normalization; without them a run takes 8% less
// (p10 of 80 interleaved runs on a shared 2-core machine: 50.9 -> 46.9 ms).
// KernelOptions::batch_norm_to_channels_last = false keeps the NCHW output, for measuring one against the other.
#include <cmath>
#include <cstdlib>
#include <string>

#include "runtime/channels_last.h"
#include "runtime/kernel_preferences.h"
#include "runtime/ops/common/elementwise_fast.h"
#include "runtime/ops/common/reference_chain.h"
#include "runtime/ops/nn/batch_norm_layout.h"

namespace parity::runtime::nn {
namespace {

namespace fast = ops::fast;

class BatchNormalizationFast final : public Kernel, public FusableKernel, public ChannelsLastKernel {
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
    auto kernel = std::unique_ptr<BatchNormalizationFast>(new BatchNormalizationFast(
        std::move(scale), std::move(shift), ops::ReferenceChain(init.create_reference_kernel(), init.num_inputs())));
    kernel->layout_change_allowed_ = kernel_options(init).batch_norm_to_channels_last;
    kernel->isa_ = kernel_isa(init);
    return kernel;
  }

  bool fuse_tail(const KernelInit& tail, size_t first_extra_input) override {
    if (relu_ || !tail.spec().domain.empty() || tail.op_type() != "Relu" || tail.num_inputs() != 1) return false;
    relu_ = true;
    reference_.add_tail(tail, first_extra_input);
    return true;
  }

  // Channels-last values only come from the oneDNN kernels (and are only worth making for them).
  bool can_read_channels_last(size_t input) const override { return PARITY_HAVE_DNNL && input == 0; }
  void read_channels_last(size_t) override { input_channels_last_ = true; }
  bool can_write_channels_last() const override {
    return input_channels_last_ || (PARITY_HAVE_DNNL && layout_change_allowed_);
  }
  void write_channels_last() override { output_channels_last_ = true; }
  bool passes_layout_through() const override { return true; }
  bool converts_to_channels_last() const override { return !input_channels_last_; }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t c = static_cast<int64_t>(scale_.size());
    const bool any_channels_last = input_channels_last_ || output_channels_last_;
    const bool fast = x.dtype() == DType::kFloat32 && x.rank() >= (any_channels_last ? 3 : 2) && x.dim(1) == c;
    // A channels-last input into an NCHW output: no planner pairs them (only a hand-made plan).
    if (!fast || (input_channels_last_ && !output_channels_last_)) {
      run_reference(ctx);
      return;
    }
    if (input_channels_last_) {
      compute_channels_last(x, ctx);
      return;
    }
    if (output_channels_last_) {
      compute_to_channels_last(x, ctx);
      return;
    }
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, x.shape());
    const int64_t rows = x.dim(0) * c;
    if (rows == 0) return;
    const int64_t spatial = x.numel() / rows;
    const float* src = x.data<float>();
    float* dst = y.data<float>();
    const fast::EwLoops& loops = fast::loops(isa_);
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
  /// y[p, c] = x[p, c] * scale[c] + shift[c] over the pixels p of a channels-last map (the same
  /// multiply, then add, as the plain loop), then the fused Relu.
  void compute_channels_last(const Tensor& x, KernelContext& ctx) const {
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, x.shape());
    const int64_t c = static_cast<int64_t>(scale_.size());
    const int64_t pixels = c == 0 ? 0 : x.numel() / c;
    const float* src = x.data<float>();
    float* dst = y.data<float>();
    const fast::EwLoops& loops = fast::loops(isa_);
    const fast::EwUnary relu{fast::EwOp::kRelu, 0.0f, 0.0f};
    const int64_t min_pixels = std::max<int64_t>(1, fast::kMinParallelElements / std::max<int64_t>(c, 1));
    fast::parallel_chunks(ctx, pixels, min_pixels, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        loops.binary_vv(fast::EwOp::kMul, src + p * c, scale_.data(), dst + p * c, c);
        loops.binary_vv(fast::EwOp::kAdd, dst + p * c, shift_.data(), dst + p * c, c);
        if (relu_) loops.unary(relu, dst + p * c, dst + p * c, c);
      }
    });
  }

  /// An NCHW image normalized into channels-last order, split over threads by pixels.
  void compute_to_channels_last(const Tensor& x, KernelContext& ctx) const {
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, x.shape());
    const int64_t batch = x.dim(0), c = static_cast<int64_t>(scale_.size());
    const int64_t pixels = batch * c == 0 ? 0 : x.numel() / (batch * c);
    const float* src = x.data<float>();
    float* dst = y.data<float>();
    const int64_t min_pixels = std::max<int64_t>(1, fast::kMinParallelElements / std::max<int64_t>(c, 1));
    for (int64_t b = 0; b < batch; ++b) {
      const float* image = src + b * c * pixels;
      float* out = dst + b * c * pixels;
      fast::parallel_chunks(ctx, pixels, min_pixels, [&](int64_t begin, int64_t end) {
        scale_shift_to_channels_last(image, scale_.data(), shift_.data(), relu_, c, pixels, begin, end, out, isa_);
      });
    }
  }

  /// The reference kernels, on an NCHW copy of a channels-last input; a channels-last output is
  /// permuted from the reference's NCHW one.
  void run_reference(KernelContext& ctx) const {
    if (!input_channels_last_ && !output_channels_last_) {
      reference_.compute(ctx);
      return;
    }
    // Below rank 3 both orders are the same bytes.
    const Tensor& x = ctx.input(0);
    if (input_channels_last_ && x.rank() >= 3) reference_.compute(ctx, {{0, Value(change_channel_layout(x, false))}});
    else reference_.compute(ctx);
    const Value& y = ctx.output_value(0);
    if (output_channels_last_ && y.is_tensor() && y.tensor().rank() >= 3)
      ctx.set_output(0, Value(change_channel_layout(y.tensor(), true)));
  }

  BatchNormalizationFast(std::vector<float> scale, std::vector<float> shift, ops::ReferenceChain reference)
      : scale_(std::move(scale)), shift_(std::move(shift)), reference_(std::move(reference)) {}

  std::vector<float> scale_, shift_;
  ops::ReferenceChain reference_;  // the node's reference kernel, then the fused Relu's
  bool relu_ = false;
  bool layout_change_allowed_ = true;  // KernelOptions::batch_norm_to_channels_last
  KernelIsa isa_ = KernelIsa::kBaseline;  // the vector tier the layout-changing loop may use
  bool input_channels_last_ = false;   // input 0 in channels-last order
  bool output_channels_last_ = false;  // the output in channels-last order
};

}  // namespace

PARITY_REGISTER_OPTIMIZED_KERNEL("", "BatchNormalization", (7, 9, 14, 15), BatchNormalizationFast);

}  // namespace parity::runtime::nn
