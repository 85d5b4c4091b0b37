// Spec: https://onnx.ai/onnx/operators/onnx__Add.html, onnx__Sub.html, onnx__Mul.html,
//       onnx__Div.html, onnx__Pow.html, onnx__Relu.html, onnx__LeakyRelu.html, onnx__Sigmoid.html,
//       onnx__HardSigmoid.html, onnx__HardSwish.html, onnx__Clip.html, onnx__Tanh.html,
//       onnx__Exp.html, onnx__Erf.html, onnx__Neg.html, onnx__Abs.html, onnx__Sqrt.html,
//       onnx__Reciprocal.html, onnx__Gelu.html
// Optimized fp32 elementwise kernels: Add/Sub/Mul/Div with broadcasting, activations (Relu,
// LeakyRelu, Clip, HardSigmoid, HardSwish, Sigmoid, Tanh) and unary math (Neg, Abs, Sqrt,
// Reciprocal, Exp, Erf, Pow with a constant exponent of 2 or 0.5) and Gelu (both forms).
//
// One kernel class runs a head node followed by the elementwise nodes fused into it as tails
// (Add -> Clip -> Div ...): each block of the output is produced by the head and then updated in
// place by every tail while it is still in cache, so a chain of k nodes reads and writes memory
// once instead of k times. Loops come from elementwise_fast.h (vectorized, same expressions as
// the reference kernels, so results are bit-identical, except Sigmoid/Tanh/Exp: see there).
//
// A tail whose operand broadcasts (LayerNorm's Div(x - mean, sqrt(var + eps)), a per-channel
// bias) starts a new pass over the chain's value, in place when the shape stays. Anything the
// fast loops do not cover at run time — another dtype, a broadcast that collapses to more than
// kMaxDims dimension groups — runs the reference kernels of the head and tails instead.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <limits>
#include <optional>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "runtime/buffer_pool.h"
#include "runtime/channels_last.h"
#include "runtime/kernel_preferences.h"
#include "runtime/ops/common/elementwise_fast.h"
#include "runtime/ops/common/reference_chain.h"
#include "runtime/positional_fusion.h"

namespace parity::runtime::ops {
namespace {

using fast::EwOp;
using fast::EwUnary;

/// Output elements processed per block: the head writes a block, the tails update it in L1.
constexpr int64_t kBlock = 1024;
/// Broadcast patterns are collapsed into at most this many dimension groups.
constexpr int kMaxDims = 4;

/// out[p][k] = map[p][k] * scale[k] for `pixels` rows of `channels` values: squeeze-excitation's
/// x * s on a channels-last map. The generic broadcast loop ran one call per pixel row (two
/// vectors for EfficientNet's 32 channels) and took 2-3x ONNX Runtime's time on these Muls.
#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx512f"))) void scale_rows_avx512(const float* map, const float* scale, int64_t pixels,
                                                          int64_t channels, float* out) {
  const int64_t full = channels / 16 * 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (channels - full)) - 1);
  for (int64_t p = 0; p < pixels; ++p) {
    const float* in = map + p * channels;
    float* o = out + p * channels;
    int64_t k = 0;
    for (; k < full; k += 16) _mm512_storeu_ps(o + k, _mm512_mul_ps(_mm512_loadu_ps(in + k), _mm512_loadu_ps(scale + k)));
    if (tail) {
      const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, in + k), _mm512_maskz_loadu_ps(tail, scale + k));
      _mm512_mask_storeu_ps(o + k, tail, v);
    }
  }
}

__attribute__((target("avx2"))) void scale_rows_avx2(const float* map, const float* scale, int64_t pixels,
                                                     int64_t channels, float* out) {
  const int64_t full = channels / 8 * 8;
  for (int64_t p = 0; p < pixels; ++p) {
    const float* in = map + p * channels;
    float* o = out + p * channels;
    int64_t k = 0;
    for (; k < full; k += 8) _mm256_storeu_ps(o + k, _mm256_mul_ps(_mm256_loadu_ps(in + k), _mm256_loadu_ps(scale + k)));
    for (; k < channels; ++k) o[k] = in[k] * scale[k];
  }
}
#endif

void scale_rows(const float* map, const float* scale, int64_t pixels, int64_t channels, float* out, KernelIsa isa) {
#if defined(__x86_64__) || defined(__i386__)
  if (isa >= KernelIsa::kAvx512) {
    scale_rows_avx512(map, scale, pixels, channels, out);
    return;
  }
  if (isa >= KernelIsa::kAvx2) {
    scale_rows_avx2(map, scale, pixels, channels, out);
    return;
  }
#endif
  for (int64_t p = 0; p < pixels; ++p)
    for (int64_t k = 0; k < channels; ++k) out[p * channels + k] = map[p * channels + k] * scale[k];
}

/// One node of a chain: a binary op with a second operand, or a unary op.
struct Step {
  bool binary = false;
  EwOp op = EwOp::kAdd;
  EwUnary unary;
  /// Binary tails: the other operand, constant (plan time) or a run-time input of the fused node.
  std::optional<Tensor> constant;
  size_t input_index = 0;
  /// Binary tails fused through input 1 (Mul(w, x)): compute op(operand, x).
  bool operand_first = false;
  /// Rank the step's input must have at least for the output to keep its shape (Pow's exponent).
  int64_t min_rank = 0;
};

std::optional<double> constant_scalar(const KernelInit& init, size_t i) {
  if (!init.has_input(i)) return std::nullopt;
  auto t = init.constant_input(i);
  if (!t || t->numel() != 1 || !(is_floating(t->dtype()) || is_integer(t->dtype()))) return std::nullopt;
  return t->value_as_double(0);
}

bool float_or_unknown(DType d) { return d == DType::kFloat32 || d == DType::kUndefined; }

/// The step a node computes, or nullopt when the fast path does not implement it. For binary
/// nodes the caller fills in the operand.
std::optional<Step> parse_node(const KernelInit& init) {
  const NodeSpec& spec = init.spec();
  if (!float_or_unknown(init.input_dtype(0))) return std::nullopt;
  const std::string& op = spec.op_type;
  Step s;
  // HardSwish chains the planner recognized (runtime/activation_rewrite.h). The fast loop uses
  // ONNX's formula, which rounds a few ulps differently from the chain's x*clip(x+3,0,6)/6.
  if (spec.domain == "ai.parity" && op == "HardSwish") {
    s.unary = EwUnary{EwOp::kHardSwish, 0.0f, 0.0f};
    return s;
  }
  // SiLU chains (Mul(x, Sigmoid(x))): the fast Sigmoid's vexp, times x.
  if (spec.domain == "ai.parity" && op == "Swish") {
    s.unary = EwUnary{EwOp::kSilu, 0.0f, 0.0f};
    return s;
  }
  if (!spec.domain.empty()) return std::nullopt;
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    if (spec.since_version < 7 || init.num_inputs() != 2 || !float_or_unknown(init.input_dtype(1))) return std::nullopt;
    s.binary = true;
    s.op = op == "Add" ? EwOp::kAdd : op == "Sub" ? EwOp::kSub : op == "Mul" ? EwOp::kMul : EwOp::kDiv;
    return s;
  }
  auto unary = [&](EwOp o, float p0 = 0.0f, float p1 = 0.0f) {
    s.unary = EwUnary{o, p0, p1};
    return s;
  };
  if (op == "Relu") return unary(EwOp::kRelu);
  if (op == "LeakyRelu") return unary(EwOp::kLeakyRelu, init.attr_float("alpha", 0.01f));
  if (op == "HardSigmoid") return unary(EwOp::kHardSigmoid, init.attr_float("alpha", 0.2f), init.attr_float("beta", 0.5f));
  if (op == "HardSwish") return unary(EwOp::kHardSwish);
  if (op == "Sigmoid") return unary(EwOp::kSigmoid);
  if (op == "Tanh") return unary(EwOp::kTanh);
  if (op == "Exp") return unary(EwOp::kExp);
  if (op == "Erf") return unary(EwOp::kErf);
  if (op == "Gelu") {
    const std::string mode = init.attr_string("approximate", "none");
    if (mode != "none" && mode != "tanh") return std::nullopt;  // the reference kernel reports it
    return unary(mode == "tanh" ? EwOp::kGeluTanh : EwOp::kGelu);
  }
  if (op == "Neg") return unary(EwOp::kNeg);
  if (op == "Abs") return unary(EwOp::kAbs);
  if (op == "Sqrt") return unary(EwOp::kSqrt);
  if (op == "Reciprocal") return unary(EwOp::kReciprocal);
  if (op == "Clip") {
    float lo = std::numeric_limits<float>::lowest(), hi = std::numeric_limits<float>::max();
    if (spec.since_version < 11) {
      lo = init.attr_float("min", -std::numeric_limits<float>::max());
      hi = init.attr_float("max", std::numeric_limits<float>::max());
    } else {
      // Bounds must be constant float scalars; anything else stays with the reference kernel.
      for (size_t i = 1; i <= 2; ++i) {
        if (!init.has_input(i)) continue;
        auto t = init.constant_input(i);
        if (!t || t->dtype() != DType::kFloat32 || t->numel() != 1) return std::nullopt;
        (i == 1 ? lo : hi) = t->data<float>()[0];
      }
    }
    return unary(EwOp::kClip, lo, hi);
  }
  if (op == "Pow") {
    if (spec.since_version < 7) return std::nullopt;
    auto exponent = init.has_input(1) ? init.constant_input(1) : std::nullopt;
    auto value = constant_scalar(init, 1);
    if (!exponent || !value || exponent->rank() > 1) return std::nullopt;
    s.min_rank = exponent->rank();
    if (*value == 2.0) return unary(EwOp::kSquare);
    if (*value == 0.5) return unary(EwOp::kSqrtPow);
    return std::nullopt;
  }
  return std::nullopt;
}

/// A binary broadcast collapsed into at most kMaxDims groups of dimensions, each either read
/// (stride of the collapsed input) or broadcast (stride 0) by each input.
struct Layout {
  int rank = 0;
  int64_t dims[kMaxDims] = {};
  int64_t stride_a[kMaxDims] = {};
  int64_t stride_b[kMaxDims] = {};
};

/// Numpy broadcast of two shapes into `out`; false when they are incompatible. (A two-shape
/// try_broadcast_shapes without its temporary vectors: small models run this per node.)
bool broadcast_pair(const Shape& a, const Shape& b, Shape& out) {
  const size_t r = std::max(a.size(), b.size());
  out.assign(r, 1);
  for (size_t k = 0; k < r; ++k) {
    const int64_t da = k + a.size() >= r ? a[k + a.size() - r] : 1;
    const int64_t db = k + b.size() >= r ? b[k + b.size() - r] : 1;
    if (da != db && da != 1 && db != 1) return false;
    out[k] = da == 1 ? db : da;
  }
  return true;
}

bool make_layout(const Shape& a, const Shape& b, const Shape& out, Layout& layout) {
  const size_t r = out.size();
  int count = 0;
  bool bcast_a[kMaxDims] = {}, bcast_b[kMaxDims] = {};
  for (size_t k = 0; k < r; ++k) {
    if (out[k] == 1) continue;
    const int64_t da = k + a.size() >= r ? a[k + a.size() - r] : 1;
    const int64_t db = k + b.size() >= r ? b[k + b.size() - r] : 1;
    const bool ba = da == 1, bb = db == 1;
    if (count > 0 && bcast_a[count - 1] == ba && bcast_b[count - 1] == bb) {
      layout.dims[count - 1] *= out[k];
      continue;
    }
    if (count == kMaxDims) return false;
    layout.dims[count] = out[k];
    bcast_a[count] = ba;
    bcast_b[count] = bb;
    ++count;
  }
  if (count == 0) {  // a single element
    layout.rank = 1;
    layout.dims[0] = 1;
    return true;
  }
  layout.rank = count;
  int64_t sa = 1, sb = 1;
  for (int k = count - 1; k >= 0; --k) {
    layout.stride_a[k] = bcast_a[k] ? 0 : sa;
    layout.stride_b[k] = bcast_b[k] ? 0 : sb;
    if (!bcast_a[k]) sa *= layout.dims[k];
    if (!bcast_b[k]) sb *= layout.dims[k];
  }
  return true;
}

/// True when an operand of shape `operand` broadcast against `value` reads element i for output
/// element i: equal shapes, up to leading 1s of `value` (LayerNorm's [C] weight against a [1, C]
/// row), so it can be applied in the same pass.
bool aligns_with(const Shape& operand, const Shape& value) {
  if (operand.size() > value.size()) return false;
  const size_t lead = value.size() - operand.size();
  for (size_t d = 0; d < lead; ++d)
    if (value[d] != 1) return false;
  return std::equal(operand.begin(), operand.end(), value.begin() + static_cast<std::ptrdiff_t>(lead));
}

/// NCHW-shaped data between channels-last (NHWC) and plain order, into a new tensor.
Tensor permute_nchw(const Tensor& t, bool to_channels_last) {
  Tensor out = pooled_uninitialized_tensor(DType::kFloat32, t.shape());
  const int64_t n = t.dim(0), c = t.dim(1), plane = t.numel() / std::max<int64_t>(n * c, 1);
  const float* src = t.data<float>();
  float* dst = out.data<float>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p) {
        const int64_t nchw = (b * c + ch) * plane + p, nhwc = (b * plane + p) * c + ch;
        if (to_channels_last) dst[nhwc] = src[nchw];
        else dst[nchw] = src[nhwc];
      }
  return out;
}

class ElementwiseKernel final : public Kernel, public PositionalFusableKernel, public ChannelsLastKernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    if (init.precision() != Precision::kFloat32) return nullptr;
    auto head = parse_node(init);
    if (!head) return nullptr;
    return std::unique_ptr<Kernel>(new ElementwiseKernel(init, *head));
  }

  bool fuse_tail(const KernelInit& tail, size_t first_extra_input) override {
    return add_tail(tail, 0, first_extra_input);
  }
  bool fuse_tail_at(const KernelInit& tail, size_t position, size_t first_extra_input) override {
    return add_tail(tail, position, first_extra_input);
  }

  void compute(KernelContext& ctx) const override {
    if (channels_last_input_) {
      compute_channels_last(ctx);
      return;
    }
    if (!try_fast(ctx)) chain_.compute(ctx);
  }

  // Channels-last hand-off (runtime/channels_last.h) for squeeze-excitation's x * s, s one value
  // per channel ([N, C, 1, 1] or [C, 1, 1]) and x a 4-D map: between a depthwise convolution and
  // the 1x1 convolution after it, the map stays channels-last, where s scales the innermost
  // (channel) axis. Only a lone binary Mul/Add/Sub/Div with static shapes of that form takes part.
  bool can_read_channels_last(size_t input) const override {
    return per_channel_map_input_ && *per_channel_map_input_ == input && tails_.empty();
  }
  void read_channels_last(size_t input) override { channels_last_input_ = input; }
  bool can_write_channels_last() const override { return channels_last_input_.has_value() && tails_.empty(); }
  void write_channels_last() override { channels_last_output_ = true; }

 private:
  struct Tail {
    Step step;
  };

  /// Accepts the tail when the chain's value is its input 0, or input 1 of a binary op.
  bool add_tail(const KernelInit& tail, size_t position, size_t first_extra_input) {
    auto step = parse_node(tail);
    if (!step || position > (step->binary ? 1u : 0u)) return false;
    const size_t other = 1 - position;  // binary only
    if (step->binary) {
      if (auto c = tail.constant_input(other); c && c->dtype() == DType::kFloat32) step->constant = *c;
      step->input_index = first_extra_input;
      step->operand_first = position == 1;
    }
    tails_.push_back(Tail{*step});
    chain_.add_tail(tail, first_extra_input, position);
    return true;
  }
  /// A binary tail's operand resolved at run time.
  struct Operand {
    const float* data = nullptr;
    bool scalar = false;
  };

  ElementwiseKernel(const KernelInit& init, const Step& head)
      : head_(head),
        chain_(init.create_reference_kernel(), init.num_inputs()),
        se_scale_direct_(kernel_options(init).se_scale_direct),
        isa_(kernel_isa(init)) {
    if (head.binary) per_channel_map_input_ = find_per_channel_map_input(init);
  }

  /// Which input is a static 4-D map [N, C, H, W] that the other input scales per channel
  /// ([N, C, 1, 1], [1, C, 1, 1] or [C, 1, 1], static too).
  static std::optional<size_t> find_per_channel_map_input(const KernelInit& init) {
    const std::optional<Shape> a = init.input_static_shape(0), b = init.input_static_shape(1);
    if (!a || !b) return std::nullopt;
    auto per_channel_of = [](const Shape& map, const Shape& other) {
      if (map.size() != 4 || map[2] * map[3] <= 1 || other.size() < 3 || other.size() > 4) return false;
      const size_t lead = 4 - other.size();
      if (lead == 0 && other[0] != 1 && other[0] != map[0]) return false;
      return other[1 - lead] == map[1] && other[2 - lead] == 1 && other[3 - lead] == 1;
    };
    if (per_channel_of(*a, *b)) return 0;
    if (per_channel_of(*b, *a)) return 1;
    return std::nullopt;
  }

  /// The head with input `*channels_last_input_` in channels-last order: the same loops over the
  /// NHWC views ([N, H*W, C] against [N or 1, 1, C]); the output keeps NHWC order when it is handed
  /// off, else it is permuted back. Runs the shapes do not fit take the reference chain on a
  /// plain copy.
  void compute_channels_last(KernelContext& ctx) const {
    const size_t map_index = *channels_last_input_, other_index = 1 - map_index;
    const bool fast = is_float(ctx, 0) && is_float(ctx, 1) && ctx.input(map_index).rank() == 4;
    const Tensor& map = ctx.input(map_index);
    if (fast) {
      const Tensor& other = ctx.input(other_index);
      const int64_t n = map.dim(0), c = map.dim(1), plane = map.dim(2) * map.dim(3);
      const bool per_channel = other.numel() == c || (other.rank() == 4 && other.numel() == n * c && other.dim(1) == c);
      if (per_channel && head_.op == EwOp::kMul && se_scale_direct_) {
        Tensor out = pooled_uninitialized_tensor(DType::kFloat32, map.shape());
        const float* in = map.data<float>();
        const float* scale = other.data<float>();
        const bool per_image = other.numel() != c;
        float* o = out.data<float>();
        // Rows of channels split between the threads (whole images' rows; 16K values at least).
        const int64_t min_rows = std::max<int64_t>(1, fast::kMinParallelElements / c);
        fast::parallel_chunks(ctx, n * plane, min_rows, [&](int64_t begin, int64_t end) {
          for (int64_t row = begin; row < end;) {
            const int64_t image = row / plane, stop = std::min(end, (image + 1) * plane);
            scale_rows(in + row * c, scale + (per_image ? image * c : 0), stop - row, c, o + row * c, isa_);
            row = stop;
          }
        });
        ctx.set_output(0, Value(channels_last_output_ ? std::move(out) : permute_nchw(out, false)));
        return;
      }
      if (per_channel) {
        const Tensor map_view = map.reshaped({n, plane, c});
        const Tensor other_view = other.reshaped({other.numel() == c ? 1 : n, 1, c});
        Segment head;
        head.step = &head_;
        head.a = map_index == 0 ? &map_view : &other_view;
        head.b = map_index == 0 ? &other_view : &map_view;
        head.shape = map_view.shape();
        if (make_layout(head.a->shape(), head.b->shape(), head.shape, head.layout)) {
          Tensor out = pooled_uninitialized_tensor(DType::kFloat32, head.shape);
          run_segment(ctx, head, *head.a, *head.b, out, {});
          out = out.reshaped(map.shape());
          ctx.set_output(0, Value(channels_last_output_ ? std::move(out) : permute_nchw(out, false)));
          return;
        }
      }
    }
    // Reference semantics on the plain layout.
    if (map.dtype() != DType::kFloat32 || map.rank() != 4) fail(ErrorCode::kInternal, "channels-last input is not a 4-D float map");
    chain_.compute(ctx, {{map_index, Value(permute_nchw(map, false))}});
    if (channels_last_output_) ctx.set_output(0, Value(permute_nchw(ctx.output_value(0).tensor(), true)));
  }

  static bool is_float(const KernelContext& ctx, size_t i) {
    return ctx.has_input(i) && ctx.input_value(i).is_tensor() && ctx.input(i).dtype() == DType::kFloat32;
  }

  /// A stretch of the chain computed in one pass: a unary or binary op (the head, or a binary
  /// tail whose operand changes the shape, or broadcasts into it), then the tails
  /// [tail_begin, tail_end), which keep the shape and have scalar or same-shape operands.
  struct Segment {
    const Step* step = nullptr;
    const Tensor* a = nullptr;
    const Tensor* b = nullptr;  // binary only
    bool in_place = false;      // writes into the previous segment's result (same shape)
    Shape shape;
    Layout layout;
    size_t tail_begin = 0, tail_end = 0;
  };

  /// The chain split into segments, or false when part of it needs the reference kernels (another
  /// dtype, a broadcast of more than kMaxDims groups, an incompatible shape).
  bool plan_segments(KernelContext& ctx, std::vector<Segment>& segments, std::vector<Operand>& operands) const {
    if (!is_float(ctx, 0) || (head_.binary && !is_float(ctx, 1))) return false;
    Segment head;
    head.step = &head_;
    head.a = &ctx.input(0);
    head.shape = head.a->shape();
    if (head_.binary) {
      head.b = &ctx.input(1);
      if (!broadcast_pair(head.a->shape(), head.b->shape(), head.shape) ||
          !make_layout(head.a->shape(), head.b->shape(), head.shape, head.layout))
        return false;
    } else if (head.a->rank() < head_.min_rank) {
      return false;
    }
    segments.reserve(1 + tails_.size());
    segments.push_back(std::move(head));
    operands.assign(tails_.size(), Operand{});
    for (size_t t = 0; t < tails_.size(); ++t) {
      const Step& s = tails_[t].step;
      Segment& current = segments.back();
      const int64_t rank = static_cast<int64_t>(current.shape.size());
      if (!s.binary) {
        if (rank < s.min_rank) return false;
        current.tail_end = t + 1;
        continue;
      }
      const Tensor* operand = s.constant ? &*s.constant : nullptr;
      if (!operand) {
        if (!is_float(ctx, s.input_index)) return false;
        operand = &ctx.input(s.input_index);
      }
      if (operand->dtype() != DType::kFloat32) return false;
      if (operand->numel() == 1 && operand->rank() <= rank) {
        operands[t] = Operand{operand->data<float>(), true};
        current.tail_end = t + 1;
        continue;
      }
      if (aligns_with(operand->shape(), current.shape)) {
        operands[t] = Operand{operand->data<float>(), false};
        current.tail_end = t + 1;
        continue;
      }
      // A broadcast: this tail starts a segment of its own (the chain's value is a or b).
      Segment next;
      next.step = &s;
      next.a = s.operand_first ? operand : nullptr;  // nullptr: the previous segment's result
      next.b = s.operand_first ? nullptr : operand;
      const Shape& shape_a = s.operand_first ? operand->shape() : current.shape;
      const Shape& shape_b = s.operand_first ? current.shape : operand->shape();
      if (!broadcast_pair(shape_a, shape_b, next.shape) || !make_layout(shape_a, shape_b, next.shape, next.layout))
        return false;
      next.in_place = next.shape == current.shape;
      next.tail_begin = next.tail_end = t + 1;
      segments.push_back(std::move(next));
    }
    return true;
  }

  bool try_fast(KernelContext& ctx) const {
    std::vector<Segment> segments;
    std::vector<Operand> operands;
    if (!plan_segments(ctx, segments, operands)) return false;
    Tensor value;
    for (const Segment& segment : segments) {
      const Tensor& a = segment.a ? *segment.a : value;
      const Tensor& b = segment.step->binary ? (segment.b ? *segment.b : value) : value;
      Tensor out = segment.in_place ? value : pooled_uninitialized_tensor(DType::kFloat32, segment.shape);
      run_segment(ctx, segment, a, b, out, operands);
      value = std::move(out);
    }
    ctx.set_output(0, Value(std::move(value)));
    return true;
  }

  void run_segment(KernelContext& ctx, const Segment& segment, const Tensor& a, const Tensor& b, Tensor& y,
                   const std::vector<Operand>& operands) const {
    const int64_t n = y.numel();
    if (n == 0) return;
    const fast::EwLoops& loops = fast::loops(isa_);
    float* out = y.data<float>();
    const float* pa = a.data<float>();
    const float* pb = segment.step->binary ? b.data<float>() : nullptr;
    const Step& step = *segment.step;

    // Applies the segment's tails to out[pos, pos + len) in place.
    auto finish_block = [&](int64_t pos, int64_t len) {
      float* block = out + pos;
      for (size_t t = segment.tail_begin; t < segment.tail_end; ++t) {
        const Step& s = tails_[t].step;
        if (!s.binary) loops.unary(s.unary, block, block, len);
        else if (operands[t].scalar && s.operand_first) loops.binary_sv(s.op, operands[t].data[0], block, block, len);
        else if (operands[t].scalar) loops.binary_vs(s.op, block, operands[t].data[0], block, len);
        else if (s.operand_first) loops.binary_vv(s.op, operands[t].data + pos, block, block, len);
        else loops.binary_vv(s.op, block, operands[t].data + pos, block, len);
      }
    };

    const int64_t steps = 1 + static_cast<int64_t>(segment.tail_end - segment.tail_begin);
    const int64_t min_chunk = fast::kMinParallelElements / steps;
    if (!step.binary) {
      fast::parallel_chunks(ctx, n, min_chunk, [&](int64_t begin, int64_t end) {
        for (int64_t pos = begin; pos < end; pos += kBlock) {
          const int64_t len = std::min(kBlock, end - pos);
          loops.unary(step.unary, pa + pos, out + pos, len);
          finish_block(pos, len);
        }
      });
      return;
    }

    const Layout& layout = segment.layout;
    const int r = layout.rank;
    const int64_t inner = layout.dims[r - 1];
    const bool step_a = layout.stride_a[r - 1] != 0, step_b = layout.stride_b[r - 1] != 0;
    fast::parallel_chunks(ctx, n, min_chunk, [&](int64_t begin, int64_t end) {
      int64_t pos = begin;
      while (pos < end) {
        int64_t row = pos / inner;
        const int64_t col = pos - row * inner;
        int64_t off_a = step_a ? col : 0, off_b = step_b ? col : 0;
        for (int k = r - 2; k >= 0; --k) {
          const int64_t q = row % layout.dims[k];
          row /= layout.dims[k];
          off_a += q * layout.stride_a[k];
          off_b += q * layout.stride_b[k];
        }
        const int64_t row_len = std::min(inner - col, end - pos);
        for (int64_t done = 0; done < row_len; done += kBlock) {
          const int64_t len = std::min(kBlock, row_len - done);
          float* block = out + pos + done;
          if (step_a && step_b) loops.binary_vv(step.op, pa + off_a + done, pb + off_b + done, block, len);
          else if (step_a) loops.binary_vs(step.op, pa + off_a + done, pb[off_b], block, len);
          else if (step_b) loops.binary_sv(step.op, pa[off_a], pb + off_b + done, block, len);
          else loops.binary_vs(step.op, pa + off_a, pb[off_b], block, 1);  // a single element
          finish_block(pos + done, len);
        }
        pos += row_len;
      }
    });
  }

  Step head_;
  ReferenceChain chain_;  // the unfused semantics, for what the fast loops do not cover
  std::vector<Tail> tails_;
  std::optional<size_t> per_channel_map_input_;  // see can_read_channels_last
  std::optional<size_t> channels_last_input_;
  bool se_scale_direct_;  // KernelOptions::se_scale_direct
  KernelIsa isa_;         // the vector tier scale_rows may use
  bool channels_last_output_ = false;
};

}  // namespace

// The same since_versions as the reference registrations (an optimized kernel only replaces the
// reference version it matches).
PARITY_REGISTER_OPTIMIZED_KERNEL("", "Add", (7, 13, 14), ElementwiseKernel);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "Sub", (7, 13, 14), ElementwiseKernel);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "Mul", (7, 13, 14), ElementwiseKernel);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "Div", (7, 13, 14), ElementwiseKernel);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "Pow", (7, 12, 13, 15), ElementwiseKernel);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "Relu", (6, 13, 14), ElementwiseKernel);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "LeakyRelu", (6, 16), ElementwiseKernel);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "Sigmoid", (6, 13), ElementwiseKernel);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "HardSigmoid", 6, ElementwiseKernel);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "HardSwish", 14, ElementwiseKernel);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "Clip", (6, 11, 12, 13), ElementwiseKernel);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "Tanh", (6, 13), ElementwiseKernel);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "Exp", (6, 13), ElementwiseKernel);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "Erf", (9, 13), ElementwiseKernel);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "Gelu", 20, ElementwiseKernel);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "Neg", (6, 13), ElementwiseKernel);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "Abs", (6, 13), ElementwiseKernel);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "Sqrt", (6, 13), ElementwiseKernel);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "Reciprocal", (6, 13), ElementwiseKernel);
PARITY_REGISTER_OPTIMIZED_KERNEL("ai.parity", "HardSwish", 1, ElementwiseKernel);
PARITY_REGISTER_OPTIMIZED_KERNEL("ai.parity", "Swish", 1, ElementwiseKernel);

}  // namespace parity::runtime::ops
