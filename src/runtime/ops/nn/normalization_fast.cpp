// Spec: https://onnx.ai/onnx/operators/onnx__RMSNormalization.html,
//       onnx__GroupNormalization.html
// Optimized RMSNormalization (opset 23) and GroupNormalization (opsets 18 and 21), float32,
// beside the reference kernels in normalization.cpp.
//
// Both compute each row's statistics with the vectorized reductions of elementwise_fast.h and
// apply them in one vectorized pass: RMSNormalization as x * inv_rms * scale, GroupNormalization
// per channel as x * a + b with a = scale / std and b = bias - mean * a (one multiply-add instead
// of the reference's (x - mean) * inv * scale + bias; results agree within a few ulp). Rows run on
// the executor's threads. Other dtypes, a scale that broadcasts inside the normalized block and
// malformed shapes run the reference kernel (which reports the errors).
#include <algorithm>
#include <cmath>
#include <memory>

#include "runtime/kernel_preferences.h"
#include "runtime/ops/common/elementwise_fast.h"
#include "runtime/ops/common/reference_chain.h"

namespace parity::runtime::nn {
namespace {

namespace fast = ops::fast;

bool float_or_unknown(DType d) { return d == DType::kFloat32 || d == DType::kUndefined; }

/// True when `param` holds exactly the values of `block` laid out as it is (leading 1s allowed,
/// never more dimensions than the block: the reference kernel rejects those).
bool covers_block(const Shape& param, const Shape& block) {
  if (param.size() > block.size()) return false;
  const size_t skip = block.size() - param.size();
  for (size_t d = 0; d < skip; ++d)
    if (block[d] != 1) return false;
  return std::equal(param.begin(), param.end(), block.begin() + skip);
}

/// Rows of `row_len` elements per parallel chunk: enough work to be worth a thread.
int64_t min_rows_per_chunk(int64_t row_len) {
  return std::max<int64_t>(1, fast::kMinParallelElements / std::max<int64_t>(row_len, 1));
}

class RmsNormalizationFast final : public Kernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    if (init.precision() != Precision::kFloat32) return nullptr;
    if (!float_or_unknown(init.input_dtype(0)) || !float_or_unknown(init.input_dtype(1))) return nullptr;
    return std::unique_ptr<Kernel>(new RmsNormalizationFast(init));
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    const int64_t rank = x.rank();
    if (x.dtype() != DType::kFloat32 || scale.dtype() != DType::kFloat32 || rank == 0 || axis_ < -rank ||
        axis_ >= rank)
      return reference_.compute(ctx);
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    const Shape block(x.shape().begin() + axis, x.shape().end());
    const int64_t inner = shape_numel(block);
    if (inner == 0 || !covers_block(scale.shape(), block)) return reference_.compute(ctx);
    const int64_t outer = x.numel() / inner;
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, x.shape());
    const float* src = x.data<float>();
    const float* gamma = scale.data<float>();
    float* dst = y.data<float>();
    const fast::EwLoops& loops = fast::loops(isa_);
    const float inv_inner = 1.0f / static_cast<float>(inner);
    fast::parallel_chunks(ctx, outer, min_rows_per_chunk(inner), [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const float* row = src + o * inner;
        const float mean_square = loops.sum_squares(row, 0.0f, inner) * inv_inner;
        const float inv_rms = 1.0f / std::sqrt(mean_square + epsilon_);
        loops.scaled_product(row, inv_rms, gamma, dst + o * inner, inner);
      }
    });
  }

 private:
  explicit RmsNormalizationFast(const KernelInit& init)
      : reference_(init.create_reference_kernel(), init.num_inputs()),
        isa_(kernel_isa(init)),
        axis_(init.attr_int("axis", -1)),
        epsilon_(init.attr_float("epsilon", 1e-5f)) {}

  ops::ReferenceChain reference_;
  KernelIsa isa_;  // the vector tier of the elementwise loops
  int64_t axis_;
  float epsilon_;
};

class GroupNormalizationFast final : public Kernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    if (init.precision() != Precision::kFloat32 || init.attr_int("num_groups", 0) <= 0) return nullptr;
    for (size_t i = 0; i < 3; ++i)
      if (!float_or_unknown(init.input_dtype(i))) return nullptr;
    return std::unique_ptr<Kernel>(new GroupNormalizationFast(init));
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    const Tensor& bias = ctx.input(2);
    if (x.dtype() != DType::kFloat32 || scale.dtype() != DType::kFloat32 || bias.dtype() != DType::kFloat32 ||
        x.rank() < 2 || x.numel() == 0)
      return reference_.compute(ctx);
    const int64_t n = x.dim(0), channels = x.dim(1);
    const int64_t params = per_channel_ ? channels : groups_;
    if (channels % groups_ != 0 || scale.numel() != params || bias.numel() != params) return reference_.compute(ctx);
    const int64_t spatial = x.numel() / (n * channels);
    const int64_t per_group = channels / groups_;
    const int64_t group_size = per_group * spatial;
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, x.shape());
    const float* src = x.data<float>();
    const float* gamma = scale.data<float>();
    const float* beta = bias.data<float>();
    float* dst = y.data<float>();
    const fast::EwLoops& loops = fast::loops(isa_);
    fast::parallel_chunks(ctx, n * groups_, min_rows_per_chunk(group_size), [&](int64_t begin, int64_t end) {
      std::vector<float> a(static_cast<size_t>(per_group)), b(static_cast<size_t>(per_group));
      for (int64_t ng = begin; ng < end; ++ng) {
        const float* xp = src + ng * group_size;
        const float count = static_cast<float>(group_size);
        const float mean = loops.sum(xp, group_size) / count;
        const float variance = loops.sum_squares(xp, mean, group_size) / count;
        const float inv_std = 1.0f / std::sqrt(variance + epsilon_);
        const int64_t g = ng % groups_;
        for (int64_t c = 0; c < per_group; ++c) {
          const int64_t p = per_channel_ ? g * per_group + c : g;
          a[c] = inv_std * gamma[p];
          b[c] = beta[p] - mean * a[c];
        }
        loops.scale_shift(xp, a.data(), b.data(), dst + ng * group_size, per_group, spatial);
      }
    });
  }

 private:
  explicit GroupNormalizationFast(const KernelInit& init)
      : reference_(init.create_reference_kernel(), init.num_inputs()),
        isa_(kernel_isa(init)),
        groups_(init.attr_int("num_groups")),
        epsilon_(init.attr_float("epsilon", 1e-5f)),
        per_channel_(init.spec().since_version >= 21) {}

  ops::ReferenceChain reference_;
  KernelIsa isa_;  // the vector tier of the elementwise loops
  int64_t groups_;
  float epsilon_;
  bool per_channel_;
};

}  // namespace

PARITY_REGISTER_OPTIMIZED_KERNEL("", "RMSNormalization", 23, RmsNormalizationFast);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "GroupNormalization", (18, 21), GroupNormalizationFast);

}  // namespace parity::runtime::nn
