#include "runtime/ops/nn/fused_tails_dnnl.h"
#include "runtime/ops/nn/swish_fast.h"

#if PARITY_HAVE_DNNL

#include <algorithm>
#include <atomic>
#include <cmath>

#include "runtime/channels_last.h"

namespace parity::runtime::nn {
namespace {

/// Dims of a per-channel operand broadcast against an output of rank `rank`: [1, C, 1, ...].
dnnl::memory::desc per_channel_desc(int64_t channels, size_t rank) {
  Shape dims(rank, 1);
  dims[1] = channels;
  return dnnl_support::plain_desc(dims);
}

}  // namespace

namespace {
std::atomic<uint64_t> fast_path_runs{0};
}  // namespace

uint64_t dnnl_fast_path_runs() { return fast_path_runs.load(); }
void count_dnnl_fast_path_run() { fast_path_runs.fetch_add(1, std::memory_order_relaxed); }

Tensor permute_channels(const Tensor& t, bool to_channels_last) { return change_channel_layout(t, to_channels_last); }

bool FusedTails::add(const KernelInit& tail, size_t first_extra_input, int64_t out_channels, size_t out_rank) {
  std::vector<PostOp> added;
  std::string label;
  std::optional<size_t> residual;
  dnnl_support::PostOps activation;
  if (dnnl_support::append_activation(activation, tail)) {
    for (int i = 0; i < activation.ops.len(); ++i) {
      PostOp op;
      float scale = 1.f;
      activation.ops.get_params_eltwise(i, scale, op.algorithm, op.alpha, op.beta);
      added.push_back(op);
    }
    label = activation.description;
  } else {
    const std::string& op = tail.op_type();
    if (!tail.spec().domain.empty() || (op != "Add" && op != "Mul" && op != "Sub") || tail.num_inputs() != 2 ||
        !tail.has_input(1))
      return false;
    label = op;
    if (std::optional<Tensor> c = tail.constant_input(1)) {
      // The constant must not change the output's shape: rank <= the output's, and every dim 1
      // except possibly the channel dim.
      if (c->dtype() != DType::kFloat32 || c->rank() > static_cast<int64_t>(out_rank)) return false;
      if (c->numel() == 1) {
        const float v = c->data<float>()[0];
        PostOp linear;
        linear.algorithm = dnnl::algorithm::eltwise_linear;
        linear.alpha = op == "Mul" ? v : 1.f;
        linear.beta = op == "Add" ? v : op == "Sub" ? -v : 0.f;
        added.push_back(linear);
      } else {
        if (op == "Sub") return false;
        // Right-aligned against [N, C, spatial...], only the channel dim may differ from 1.
        const size_t offset = out_rank - static_cast<size_t>(c->rank());
        for (size_t d = 0; d < static_cast<size_t>(c->rank()); ++d) {
          const int64_t expected = d + offset == 1 ? out_channels : 1;
          if (c->shape()[d] != expected) return false;
        }
        if (offset > 1) return false;  // the constant has no channel dim
        PostOp binary;
        binary.kind = Kind::kBinaryConstant;
        binary.algorithm = op == "Mul" ? dnnl::algorithm::binary_mul : dnnl::algorithm::binary_add;
        binary.constant = c->clone().reshaped({out_channels});
        added.push_back(binary);
      }
    } else {
      // A residual Add of a run-time tensor: the sum post-op accumulates onto it.
      if (op != "Add" || residual_input_) return false;
      const DType dtype = tail.input_dtype(1);
      if (dtype != DType::kUndefined && dtype != DType::kFloat32) return false;
      if (std::optional<Shape> s = tail.input_static_shape(1); s && s->size() != out_rank) return false;
      PostOp sum;
      sum.kind = Kind::kSum;
      added.push_back(sum);
      residual = first_extra_input;
    }
  }

  // Build the new step list aside: a tail that cannot be expressed leaves everything unchanged.
  std::vector<PostOp> steps = steps_;
  for (auto& op : added) {
    const bool linear = op.kind == Kind::kEltwise && op.algorithm == dnnl::algorithm::eltwise_linear;
    // Consecutive affine steps become one: a2 * (a1 * x + b1) + b2.
    if (linear && !steps.empty() && steps.back().kind == Kind::kEltwise &&
        steps.back().algorithm == dnnl::algorithm::eltwise_linear) {
      PostOp& last = steps.back();
      last.beta = op.alpha * last.beta + op.beta;
      last.alpha = op.alpha * last.alpha;
      continue;
    }
    // oneDNN 2.6's jit post-op injectors give every eltwise post-op the alpha/beta of the FIRST
    // one with the same algorithm (Conv -> linear -> HardSwish -> linear computed the second
    // linear with the first's scale and shift; two Clips clip to the first's bounds; all of
    // brgconv, brgconv_1x1, brdgmm_dw and jit:avx512_core convolutions). A later affine step
    // becomes per-channel binary multiply/add post-ops, which take their operands from memory;
    // another conflicting activation is not fused.
    if (op.kind == Kind::kEltwise && has_conflicting_eltwise(steps, op)) {
      if (!linear) return false;
      if (op.alpha != 1.f) steps.push_back(filled_binary(dnnl::algorithm::binary_mul, op.alpha, out_channels));
      if (op.beta != 0.f) steps.push_back(filled_binary(dnnl::algorithm::binary_add, op.beta, out_channels));
      continue;
    }
    steps.push_back(std::move(op));
  }
  steps_ = std::move(steps);

  if (residual) residual_input_ = residual;
  description_ += (description_.empty() ? "" : "+") + label;
  return true;
}

bool FusedTails::has_conflicting_eltwise(const std::vector<PostOp>& steps, const PostOp& op) {
  for (const PostOp& s : steps)
    if (s.kind == Kind::kEltwise && s.algorithm == op.algorithm && (s.alpha != op.alpha || s.beta != op.beta))
      return true;
  return false;
}

FusedTails::PostOp FusedTails::filled_binary(dnnl::algorithm algorithm, float value, int64_t channels) {
  PostOp binary;
  binary.kind = Kind::kBinaryConstant;
  binary.algorithm = algorithm;
  binary.constant = Tensor::uninitialized(DType::kFloat32, {channels});
  std::fill_n(binary.constant.data<float>(), channels, value);
  return binary;
}

bool FusedTails::fast_path_ok(const KernelContext& ctx, const Shape& out_shape) const {
  if (!residual_input_) return true;
  if (!ctx.has_input(*residual_input_) || !ctx.input_value(*residual_input_).is_tensor()) return false;
  const Tensor& addend = ctx.input(*residual_input_);
  return addend.dtype() == DType::kFloat32 && addend.shape() == out_shape;
}

std::optional<float> FusedTails::trailing_swish() const {
  if (steps_.empty() || steps_.back().kind != Kind::kEltwise || steps_.back().algorithm != dnnl::algorithm::eltwise_swish)
    return std::nullopt;
  return steps_.back().alpha;
}

bool FusedTails::output_non_negative() const {
  if (steps_.empty() || steps_.back().kind != Kind::kEltwise) return false;
  const PostOp& last = steps_.back();
  return (last.algorithm == dnnl::algorithm::eltwise_relu && last.alpha == 0.f) ||
         (last.algorithm == dnnl::algorithm::eltwise_clip_v2 && last.alpha >= 0.f);
}

dnnl::post_ops FusedTails::post_ops(const Shape& out_shape, bool drop_trailing_swish) const {
  dnnl::post_ops ops;
  const size_t count = drop_trailing_swish && trailing_swish() ? steps_.size() - 1 : steps_.size();
  for (size_t i = 0; i < count; ++i) {
    const PostOp& op = steps_[i];
    switch (op.kind) {
      case Kind::kEltwise: ops.append_eltwise(1.f, op.algorithm, op.alpha, op.beta); break;
      case Kind::kBinaryConstant:
        ops.append_binary(op.algorithm, per_channel_desc(out_shape[1], out_shape.size()));
        break;
      case Kind::kSum: ops.append_sum(1.f); break;
    }
  }
  return ops;
}

void FusedTails::add_binary_args(std::unordered_map<int, dnnl::memory>& args, const Shape& out_shape,
                                 int64_t first_channel) const {
  for (size_t i = 0; i < steps_.size(); ++i) {
    const PostOp& op = steps_[i];
    if (op.kind != Kind::kBinaryConstant) continue;
    float* channels = const_cast<float*>(op.constant.data<float>()) + first_channel;
    args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1] =
        dnnl::memory(per_channel_desc(out_shape[1], out_shape.size()), dnnl_support::cpu_engine(), channels);
  }
}

bool FusedTails::loops_ok() const {
  using alg = dnnl::algorithm;
  return std::all_of(steps_.begin(), steps_.end(), [this](const PostOp& op) {
    return op.kind != Kind::kEltwise || op.algorithm == alg::eltwise_linear || op.algorithm == alg::eltwise_relu ||
           op.algorithm == alg::eltwise_clip_v2 || op.algorithm == alg::eltwise_logistic ||
           op.algorithm == alg::eltwise_tanh || op.algorithm == alg::eltwise_hardswish ||
           (op.algorithm == alg::eltwise_swish && fast_swish_available(isa_));
  });
}

namespace {

/// One eltwise step over `count` values (an algorithm FusedTails::loops_ok accepts), in the
/// reference kernels' own forms.
void apply_eltwise(dnnl::algorithm algorithm, float alpha, float beta, float* y, int64_t count, KernelIsa isa) {
  using alg = dnnl::algorithm;
  switch (algorithm) {
    case alg::eltwise_linear:
      for (int64_t e = 0; e < count; ++e) y[e] = alpha * y[e] + beta;
      break;
    case alg::eltwise_relu:
      for (int64_t e = 0; e < count; ++e) y[e] = y[e] > 0.f ? y[e] : (alpha == 0.f ? 0.f : alpha * y[e]);
      break;
    case alg::eltwise_clip_v2:
      for (int64_t e = 0; e < count; ++e) y[e] = std::min(std::max(y[e], alpha), beta);
      break;
    case alg::eltwise_logistic:
      for (int64_t e = 0; e < count; ++e) y[e] = 1.f / (1.f + std::exp(-y[e]));
      break;
    case alg::eltwise_tanh:
      for (int64_t e = 0; e < count; ++e) y[e] = std::tanh(y[e]);
      break;
    case alg::eltwise_hardswish:
      for (int64_t e = 0; e < count; ++e) y[e] *= std::max(0.f, std::min(1.f, y[e] / 6.f + 0.5f));
      break;
    case alg::eltwise_swish:  // the pass the convolutions run after oneDNN too (swish_fast.h)
      swish_in_place(y, count, alpha, isa);
      break;
    default: PARITY_CHECK(false, kInternal, "FusedTails: no loop for eltwise algorithm ", static_cast<int>(algorithm));
  }
}

}  // namespace

void FusedTails::apply_to_rows(float* y, int64_t rows, int64_t channels, const float* residual) const {
  for (const PostOp& op : steps_) {
    if (op.kind == Kind::kEltwise) {
      apply_eltwise(op.algorithm, op.alpha, op.beta, y, rows * channels, isa_);
    } else if (op.kind == Kind::kSum) {
      for (int64_t e = 0; e < rows * channels; ++e) y[e] += residual[e];
    } else {
      const float* c = op.constant.data<float>();
      const bool multiply = op.algorithm == dnnl::algorithm::binary_mul;
      for (int64_t r = 0; r < rows; ++r) {
        float* row = y + r * channels;
        for (int64_t k = 0; k < channels; ++k) row[k] = multiply ? row[k] * c[k] : row[k] + c[k];
      }
    }
  }
}

std::optional<FusedTails::SimpleChain> FusedTails::simple_chain() const {
  using alg = dnnl::algorithm;
  SimpleChain chain;
  size_t next = 0;
  if (next < steps_.size() && steps_[next].kind == Kind::kSum) {
    chain.sum = true;
    ++next;
  }
  if (next < steps_.size()) {
    const PostOp& op = steps_[next++];
    if (op.kind != Kind::kEltwise) return std::nullopt;
    if (op.algorithm == alg::eltwise_relu && op.alpha == 0.f) {
      chain.activation = SimpleChain::Activation::kRelu;
    } else if (op.algorithm == alg::eltwise_clip_v2) {
      chain.activation = SimpleChain::Activation::kClip;
      chain.lo = op.alpha;
      chain.hi = op.beta;
    } else if (op.algorithm == alg::eltwise_hardswish) {
      chain.activation = SimpleChain::Activation::kHardSwish;
    } else {
      return std::nullopt;
    }
  }
  if (next != steps_.size()) return std::nullopt;
  return chain;
}

const Tensor* FusedTails::residual(const KernelContext& ctx) const {
  return residual_input_ ? &ctx.input(*residual_input_) : nullptr;
}

}  // namespace parity::runtime::nn

#endif  // PARITY_HAVE_DNNL
