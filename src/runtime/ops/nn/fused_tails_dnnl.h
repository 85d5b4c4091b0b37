// The elementwise nodes fused into a oneDNN convolution kernel (FusableKernel tails) as oneDNN
// post-ops. The kernel also records each accepted tail in its ops::ReferenceChain for the runs the
// fast path does not take (another dtype, an addend whose shape is not the conv output's), so a
// fused node computes exactly what the unfused nodes would in every case.
#pragma once

#if PARITY_HAVE_DNNL

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/cpu_isa.h"
#include "runtime/dnnl/dnnl_support.h"

namespace parity::runtime::nn {

/// How many runs of the oneDNN Conv/ConvTranspose/pool kernels took their fast path (oneDNN, or a
/// conv's direct product on 1x1 maps) rather than the reference fallback, process-wide; lets
/// tests check that a case really ran optimized.
uint64_t dnnl_fast_path_runs();
void count_dnnl_fast_path_run();

/// A copy of `t` (NCHW-style shape, rank >= 2) with its data permuted between NCHW and
/// channels-last order (runtime/channels_last.h): the reference fallbacks of kernels that read or
/// write channels-last values.
Tensor permute_channels(const Tensor& t, bool to_channels_last);

class FusedTails {
 public:
  FusedTails() = default;
  /// `isa`: the vector tier the row loops (loops_ok, apply_to_rows) may use.
  explicit FusedTails(KernelIsa isa) : isa_(isa) {}

  /// Absorbs `tail` (its input 0 is the head's current output) if it maps to post-ops:
  ///  - an activation dnnl_support::append_activation knows (Relu, Clip, HardSwish, Sigmoid, ...);
  ///  - Mul/Add/Sub of a scalar constant (a linear eltwise post-op);
  ///  - Add/Mul of a per-channel constant of `out_channels` values (a per-channel binary post-op);
  ///  - one residual Add of a run-time tensor (a sum post-op; the fast path needs the addend to be
  ///    an fp32 tensor of exactly the output's shape, other runs take the reference path).
  /// `out_rank` is the rank of the head's output. Returns false, changing nothing, otherwise.
  bool add(const KernelInit& tail, size_t first_extra_input, int64_t out_channels, size_t out_rank);

  bool empty() const { return steps_.empty(); }
  /// "Relu", "Add+Relu", ...: what was fused, in order.
  const std::string& description() const { return description_; }
  bool has_residual() const { return residual_input_.has_value(); }
  /// The fused node's input index of the residual addend, if a residual Add was fused.
  std::optional<size_t> residual_input() const { return residual_input_; }

  /// Whether the fast path can run with these inputs (the residual addend, if any, is fp32 and
  /// has exactly `out_shape`).
  bool fast_path_ok(const KernelContext& ctx, const Shape& out_shape) const;
  /// The post-op chain for an output of `out_shape` (a slice of the head's output channels when
  /// out_shape[1] is fewer than the head's); without its last step when
  /// `drop_trailing_swish` and that step is a Swish (the caller applies it itself).
  dnnl::post_ops post_ops(const Shape& out_shape, bool drop_trailing_swish = false) const;
  /// Swish's alpha when the chain ends with a Swish eltwise step (SiLU, x * sigmoid(alpha * x)).
  std::optional<float> trailing_swish() const;
  /// Whether every value the chain hands out is >= 0: it ends with a Relu or a Clip whose lower
  /// bound is >= 0 (an int8 output may then be stored as u8).
  bool output_non_negative() const;
  /// Adds the memory arguments of the binary post-ops (per-channel constants): out_shape[1] of
  /// them from `first_channel` on, for a primitive that computes that channel range.
  void add_binary_args(std::unordered_map<int, dnnl::memory>& args, const Shape& out_shape,
                       int64_t first_channel = 0) const;
  /// Whether apply_to_rows() computes every step (the direct product of a conv on a 1x1 map).
  bool loops_ok() const;
  /// Runs the steps in place over `rows` rows of `channels` values, each row one image's whole
  /// output (a 1x1 map, where NCHW and channels-last agree), as the post-ops would; `residual`
  /// holds the sum step's addend in the same order (nullptr without one).
  void apply_to_rows(float* y, int64_t rows, int64_t channels, const float* residual) const;
  /// The chain when it is at most a residual sum followed by at most one Relu, Clip or HardSwish
  /// (what a loop can apply to values still in registers); nullopt for any other chain.
  struct SimpleChain {
    bool sum = false;  // the residual Add comes first
    enum class Activation { kNone, kRelu, kClip, kHardSwish } activation = Activation::kNone;
    float lo = 0.f, hi = 0.f;  // Clip's bounds
  };
  std::optional<SimpleChain> simple_chain() const;
  /// Whether the chain is exactly one Swish.
  bool lone_swish() const { return steps_.size() == 1 && trailing_swish().has_value(); }
  /// The residual addend the sum post-op accumulates onto, or nullptr when there is none.
  const Tensor* residual(const KernelContext& ctx) const;

 private:
  enum class Kind { kEltwise, kBinaryConstant, kSum };
  struct PostOp {
    Kind kind = Kind::kEltwise;
    dnnl::algorithm algorithm = dnnl::algorithm::undef;
    float alpha = 0.f, beta = 0.f;
    Tensor constant;  // kBinaryConstant: the per-channel values, [C]
  };

  /// Whether `steps` holds an eltwise post-op of op's algorithm with other parameters.
  static bool has_conflicting_eltwise(const std::vector<PostOp>& steps, const PostOp& op);
  /// A per-channel binary post-op whose operand is `value` in every channel.
  static PostOp filled_binary(dnnl::algorithm algorithm, float value, int64_t channels);

  std::vector<PostOp> steps_;
  KernelIsa isa_ = KernelIsa::kBaseline;
  std::optional<size_t> residual_input_;  // ctx input index of the residual addend
  std::string description_;
};

}  // namespace parity::runtime::nn

#endif  // PARITY_HAVE_DNNL
