// Spec: https://onnx.ai/onnx/operators/onnx__Attention.html, onnx__LinearAttention.html
// Attention (opsets 23, 24 and 25).
// Scaled dot-product attention over [batch, heads, sequence, head_size] (or [batch, sequence,
// hidden] with q_num_heads/kv_num_heads), with grouped-query heads, a boolean or additive mask,
// causal and sliding-window masking, a past/present key-value cache, padded caches
// (nonpad_kv_seqlen, opset 24), softcap and the optional QK output.
//
// The reference kernel computes one score row at a time in the accumulation type (float, or
// double for the fp64 oracle) and rounds once into the output dtype — except for bfloat16
// inputs, where it rounds to bfloat16 after every step the spec's reference implementation takes
// on bfloat16 arrays (Q and K each times sqrt(scale), QK^T, softcap's divide/tanh/multiply, the
// bias, softmax's subtract/exp/running sum/divide, and the final product; the dot products
// accumulate in float). A one-ulp bfloat16 difference is 0.4% relative, so a single final rounding
// does not reproduce the spec's results.
//
// LinearAttention (opset 27): the
// recurrent state form (linear, gated, delta and gated-delta update rules).
//
// FlexAttention (ai.onnx.preview, version 1): attention whose scores and probabilities pass
// through user subgraphs (score_mod, mask_mod, prob_mod), each mapping a [B, H, L, S] tensor.
#include <cmath>
#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>
#include <string>
#include <vector>

#include "runtime/ops/nn/nn_common.h"

namespace parity::runtime::nn {
namespace {

/// How a Q/K/V tensor is laid out: 4-D [batch, heads, seq, head] or 3-D [batch, seq, heads*head].
struct HeadLayout {
  int64_t batch = 0, heads = 0, seq = 0, head_size = 0;
  bool packed = false;  // the 3-D form

  /// Offset of element d of token s in head h of batch b.
  int64_t offset(int64_t b, int64_t h, int64_t s, int64_t d) const {
    return packed ? ((b * seq + s) * heads + h) * head_size + d : ((b * heads + h) * seq + s) * head_size + d;
  }
};

HeadLayout head_layout(const Tensor& t, int64_t num_heads_attr, const char* what, const KernelContext& ctx) {
  const Shape& s = t.shape();
  HeadLayout l;
  if (t.rank() == 4) {
    l = {s[0], s[1], s[2], s[3], false};
    if (num_heads_attr > 0 && num_heads_attr != s[1])
      ctx.fail(what, " has ", s[1], " heads but the num_heads attribute says ", num_heads_attr);
    return l;
  }
  if (t.rank() != 3) ctx.fail(what, " must be 3-D or 4-D, got shape ", shape_to_string(s));
  if (num_heads_attr <= 0) ctx.fail("3-D ", what, " needs the q_num_heads and kv_num_heads attributes");
  if (s[2] % num_heads_attr != 0)
    ctx.fail(what, " hidden size ", s[2], " is not a multiple of its ", num_heads_attr, " heads");
  return {s[0], num_heads_attr, s[1], s[2] / num_heads_attr, true};
}

/// Masks bigger than this negative value are "allowed"; -inf marks a masked score.
constexpr double kMasked = -std::numeric_limits<double>::infinity();

/// The attention mask broadcast to [batch, q_heads, q_seq, total_seq] (right-aligned, rank 1-4);
/// its last dimension may be shorter than the total sequence, the rest counting as masked.
template <typename A>
class AttentionMask {
 public:
  AttentionMask(const Tensor& mask, int64_t batch, int64_t heads, int64_t q_seq, const KernelContext& ctx)
      : is_bool_(mask.dtype() == DType::kBool) {
    if (mask.rank() < 1 || mask.rank() > 4) ctx.fail("attn_mask must have rank 1 to 4, got ", mask.rank());
    Shape s(4 - mask.rank(), 1);
    s.insert(s.end(), mask.shape().begin(), mask.shape().end());
    const int64_t want[3] = {batch, heads, q_seq};
    for (int d = 0; d < 3; ++d)
      if (s[d] != 1 && s[d] != want[d])
        ctx.fail("attn_mask shape ", shape_to_string(mask.shape()), " does not broadcast to [", batch, ", ", heads,
                 ", ", q_seq, ", total_sequence_length]");
    dims_ = s;
    if (is_bool_) {
      const bool* p = mask.data<bool>();
      values_.resize(static_cast<size_t>(mask.numel()));
      for (int64_t i = 0; i < mask.numel(); ++i) values_[i] = p[i] ? A(0) : static_cast<A>(kMasked);
    } else {
      values_ = load_as<A>(mask);
    }
  }

  /// The additive bias of score (b, h, i, j).
  A at(int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (j >= dims_[3]) return static_cast<A>(kMasked);
    const int64_t bi = dims_[0] == 1 ? 0 : b, hi = dims_[1] == 1 ? 0 : h, ii = dims_[2] == 1 ? 0 : i;
    return values_[((bi * dims_[1] + hi) * dims_[2] + ii) * dims_[3] + j];
  }

 private:
  bool is_bool_;
  Shape dims_;
  std::vector<A> values_;
};

class AttentionKernel : public Kernel {
 public:
  explicit AttentionKernel(const KernelInit& init)
      : is_causal_(init.attr_int("is_causal", 0) != 0),
        q_num_heads_(init.attr_int("q_num_heads", 0)),
        kv_num_heads_(init.attr_int("kv_num_heads", 0)),
        qk_output_mode_(init.attr_int("qk_matmul_output_mode", 0)),
        has_scale_(init.has_attr("scale")),
        scale_(init.attr_float("scale", 1.0f)),
        softcap_(init.attr_float("softcap", 0.0f)),
        left_window_(init.attr_int("left_window_size", -1)),
        right_window_(init.attr_int("right_window_size", -1)) {
    if (qk_output_mode_ < 0 || qk_output_mode_ > 3)
      init.fail("qk_matmul_output_mode must be 0, 1, 2 or 3, got ", qk_output_mode_);
    if (init.has_input(4) != init.has_input(5)) init.fail("past_key and past_value must be given together");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& q = ctx.input(0);
    visit_float_compute(q.dtype(), ctx, [&](auto tag) { run<typename decltype(tag)::type>(ctx); });
  }

 private:
  /// Everything resolved from the input shapes for one run.
  struct Dims {
    HeadLayout q, k, v;
    int64_t past = 0;   // past sequence length
    int64_t total = 0;  // past + new key/value tokens
    int64_t group = 1;  // query heads per key/value head
  };

  Dims resolve(const KernelContext& ctx) const {
    Dims d;
    d.q = head_layout(ctx.input(0), ctx.input(0).rank() == 3 ? q_num_heads_ : 0, "Q", ctx);
    d.k = head_layout(ctx.input(1), ctx.input(1).rank() == 3 ? kv_num_heads_ : 0, "K", ctx);
    d.v = head_layout(ctx.input(2), ctx.input(2).rank() == 3 ? kv_num_heads_ : 0, "V", ctx);
    if (ctx.input(0).rank() != ctx.input(1).rank() || ctx.input(0).rank() != ctx.input(2).rank())
      ctx.fail("Q, K and V must have the same rank");
    if (d.k.batch != d.q.batch || d.v.batch != d.q.batch) ctx.fail("Q, K and V must have the same batch size");
    if (d.k.heads != d.v.heads || d.k.seq != d.v.seq) ctx.fail("K and V must have the same heads and sequence length");
    if (d.k.head_size != d.q.head_size)
      ctx.fail("Q head size ", d.q.head_size, " differs from K head size ", d.k.head_size);
    if (d.k.heads == 0 || d.q.heads % d.k.heads != 0)
      ctx.fail("query heads (", d.q.heads, ") must be a multiple of key/value heads (", d.k.heads, ")");
    d.group = d.q.heads / d.k.heads;
    if (ctx.has_input(4)) {
      const Shape& pk = ctx.input(4).shape();
      const Shape& pv = ctx.input(5).shape();
      if (pk.size() != 4 || pk[0] != d.q.batch || pk[1] != d.k.heads || pk[3] != d.k.head_size)
        ctx.fail("past_key shape ", shape_to_string(pk), " does not match K");
      if (pv.size() != 4 || pv[0] != d.q.batch || pv[1] != d.k.heads || pv[2] != pk[2] || pv[3] != d.v.head_size)
        ctx.fail("past_value shape ", shape_to_string(pv), " does not match V and past_key");
      d.past = pk[2];
    }
    d.total = d.past + d.k.seq;
    return d;
  }

  /// present = concat(past, new) along the sequence, as [batch, kv_heads, total, head_size].
  template <typename A>
  static std::vector<A> concat_cache(const KernelContext& ctx, size_t past_input, size_t new_input,
                                     const HeadLayout& l, int64_t past) {
    std::vector<A> out(static_cast<size_t>(l.batch * l.heads * (past + l.seq) * l.head_size));
    std::vector<A> past_values;
    if (past > 0) past_values = load_as<A>(ctx.input(past_input));
    const AccInput<A> fresh(ctx.input(new_input));
    const int64_t total = past + l.seq;
    for (int64_t b = 0; b < l.batch; ++b)
      for (int64_t h = 0; h < l.heads; ++h)
        for (int64_t s = 0; s < total; ++s)
          for (int64_t e = 0; e < l.head_size; ++e) {
            const int64_t dst = ((b * l.heads + h) * total + s) * l.head_size + e;
            out[dst] = s < past ? past_values[((b * l.heads + h) * past + s) * l.head_size + e]
                                : fresh[l.offset(b, h, s - past, e)];
          }
    return out;
  }

  /// The last key position query i of batch b may see under causal masking (bottom-right
  /// aligned: after the past cache, or after nonpad_kv_seqlen[b] - q_seq cached tokens).
  int64_t frontier(int64_t i, int64_t b, const Dims& d, const std::vector<int64_t>& nonpad, bool has_past) const {
    if (has_past) return i + d.past;
    if (!nonpad.empty()) return i + nonpad[b] - d.q.seq;
    return i;
  }

  /// True when causal or window masking removes key j for query i of batch b.
  bool structurally_masked(int64_t i, int64_t j, int64_t b, const Dims& d, const std::vector<int64_t>& nonpad,
                           bool has_past) const {
    if (!is_causal_ && left_window_ < 0 && right_window_ < 0) return false;
    const int64_t f = frontier(i, b, d, nonpad, has_past);
    if (is_causal_ && j > f) return true;
    if (left_window_ >= 0 && j < f - left_window_) return true;
    if (right_window_ >= 0 && !is_causal_ && j > f + right_window_) return true;
    return false;
  }

  template <typename A>
  void run(KernelContext& ctx) const {
    const Dims d = resolve(ctx);
    const bool has_past = ctx.has_input(4);
    const std::vector<A> keys = concat_cache<A>(ctx, 4, 1, d.k, d.past);
    const std::vector<A> values = concat_cache<A>(ctx, 5, 2, d.v, d.past);
    const AccInput<A> qv(ctx.input(0));
    std::vector<int64_t> nonpad;
    if (ctx.has_input(6)) {
      nonpad = read_int64s(ctx.input(6));
      if (static_cast<int64_t>(nonpad.size()) != d.q.batch)
        ctx.fail("nonpad_kv_seqlen has ", nonpad.size(), " values for a batch of ", d.q.batch);
      for (size_t b = 0; b < nonpad.size(); ++b)
        if (nonpad[b] < 0 || nonpad[b] > d.total)
          ctx.fail("nonpad_kv_seqlen[", b, "] is ", nonpad[b], ", outside the ", d.total, " keys");
    }
    std::optional<AttentionMask<A>> mask;
    if (ctx.has_input(3)) mask.emplace(ctx.input(3), d.q.batch, d.q.heads, d.q.seq, ctx);

    const DType out_dtype = ctx.input(0).dtype();
    const Shape y_shape = d.q.packed ? Shape{d.q.batch, d.q.seq, d.q.heads * d.v.head_size}
                                     : Shape{d.q.batch, d.q.heads, d.q.seq, d.v.head_size};
    AccOutput<A> y(ctx, 0, out_dtype, y_shape);
    const HeadLayout y_layout{d.q.batch, d.q.heads, d.q.seq, d.v.head_size, d.q.packed};
    const bool want_qk = ctx.num_outputs() > 3 && ctx.has_output(3);
    std::vector<A> qk_out;
    if (want_qk) qk_out.resize(static_cast<size_t>(d.q.batch * d.q.heads * d.q.seq * d.total));

    const A scale = has_scale_ ? static_cast<A>(scale_) : A(1) / std::sqrt(static_cast<A>(d.q.head_size));
    const A neg_inf = -std::numeric_limits<A>::infinity();
    // bfloat16: round each step as the spec's reference does (see the top of the file).
    const bool stepwise = std::is_same_v<A, float> && out_dtype == DType::kBFloat16;
    auto r = [&](A v) -> A { return stepwise ? static_cast<A>(static_cast<float>(BFloat16(static_cast<float>(v)))) : v; };
    // Stepwise, Q and K are each multiplied by sqrt(scale) before their product.
    const double scale_d = has_scale_ ? static_cast<double>(scale_) : 1.0 / std::sqrt(static_cast<double>(d.q.head_size));
    const A root_scale = r(static_cast<A>(std::sqrt(scale_d)));
    std::vector<A> scaled_keys;
    if (stepwise) {
      scaled_keys.resize(keys.size());
      for (size_t n = 0; n < keys.size(); ++n) scaled_keys[n] = r(keys[n] * root_scale);
    }
    const A softcap = r(static_cast<A>(softcap_));
    ctx.parallel_for(d.q.batch * d.q.heads, [&](int64_t begin, int64_t end) {
      std::vector<A> scores(static_cast<size_t>(d.total)), biased(static_cast<size_t>(d.total));
      std::vector<A> query(static_cast<size_t>(d.q.head_size));
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t b = bh / d.q.heads, h = bh % d.q.heads, kh = h / d.group;
        const A* kbase = (stepwise ? scaled_keys.data() : keys.data()) + (b * d.k.heads + kh) * d.total * d.k.head_size;
        const A* vbase = values.data() + (b * d.k.heads + kh) * d.total * d.v.head_size;
        for (int64_t i = 0; i < d.q.seq; ++i) {
          for (int64_t e = 0; e < d.q.head_size; ++e)
            query[e] = stepwise ? r(qv[d.q.offset(b, h, i, e)] * root_scale) : qv[d.q.offset(b, h, i, e)];
          A row_max = neg_inf;
          for (int64_t j = 0; j < d.total; ++j) {
            A dot = 0;
            for (int64_t e = 0; e < d.q.head_size; ++e) dot += query[e] * kbase[j * d.k.head_size + e];
            A s = stepwise ? r(dot) : dot * scale;
            if (softcap_ > 0.0f) s = r(r(std::tanh(r(s / softcap))) * softcap);
            scores[j] = s;
            A bias = mask ? mask->at(b, h, i, j) : A(0);
            if (structurally_masked(i, j, b, d, nonpad, has_past)) bias = neg_inf;
            if (!nonpad.empty() && j >= nonpad[b]) bias = neg_inf;
            biased[j] = r(s + bias);
            if (biased[j] > row_max) row_max = biased[j];
          }
          A* qk_row = want_qk ? qk_out.data() + ((b * d.q.heads + h) * d.q.seq + i) * d.total : nullptr;
          if (qk_row && qk_output_mode_ <= 1) std::copy(scores.begin(), scores.end(), qk_row);
          if (qk_row && qk_output_mode_ == 2) std::copy(biased.begin(), biased.end(), qk_row);
          // Softmax; a row with every key masked attends to nothing (zeros, not NaN).
          A sum = 0;
          for (int64_t j = 0; j < d.total; ++j) {
            scores[j] = row_max == neg_inf ? A(0) : r(std::exp(r(biased[j] - row_max)));
            sum = r(sum + scores[j]);
          }
          for (int64_t j = 0; j < d.total; ++j) scores[j] = sum > A(0) ? r(scores[j] / sum) : A(0);
          if (qk_row && qk_output_mode_ == 3) std::copy(scores.begin(), scores.end(), qk_row);
          for (int64_t e = 0; e < d.v.head_size; ++e) {
            A acc = 0;
            for (int64_t j = 0; j < d.total; ++j) acc += scores[j] * vbase[j * d.v.head_size + e];
            y[y_layout.offset(b, h, i, e)] = acc;
          }
        }
      }
    });
    y.finish();
    emit_output(ctx, 1, ctx.input(1).dtype(), Shape{d.q.batch, d.k.heads, d.total, d.k.head_size}, keys);
    emit_output(ctx, 2, ctx.input(2).dtype(), Shape{d.q.batch, d.k.heads, d.total, d.v.head_size}, values);
    if (want_qk) emit_output(ctx, 3, out_dtype, Shape{d.q.batch, d.q.heads, d.q.seq, d.total}, qk_out);
  }

  bool is_causal_;
  int64_t q_num_heads_, kv_num_heads_, qk_output_mode_;
  bool has_scale_;
  float scale_, softcap_;
  int64_t left_window_, right_window_;
};

/// One token step at a time over a [batch, kv_heads, d_k, d_v] state: optional decay
/// (state *= exp(g)), optional delta correction (v <- beta * (v - state^T (erase * k))), the write
/// state += k v^T, then the read o = scale * q^T state with query heads grouped onto KV heads.
class LinearAttentionKernel : public Kernel {
 public:
  explicit LinearAttentionKernel(const KernelInit& init)
      : q_heads_(init.attr_int("q_num_heads", 0)),
        kv_heads_(init.attr_int("kv_num_heads", 0)),
        scale_(init.attr_float("scale", 0.0f)) {
    const std::string rule = init.attr_string("update_rule", "gated_delta");
    if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
      init.fail("update_rule must be linear, gated, delta or gated_delta, got '", rule, "'");
    gating_ = rule == "gated" || rule == "gated_delta";
    delta_ = rule == "delta" || rule == "gated_delta";
    if (q_heads_ <= 0 || kv_heads_ <= 0 || q_heads_ % kv_heads_ != 0)
      init.fail("q_num_heads (", q_heads_, ") must be a positive multiple of kv_num_heads (", kv_heads_, ")");
    if (gating_ != init.has_input(4)) init.fail("update_rule '", rule, gating_ ? "' requires" : "' forbids", " the decay input");
    if (delta_ != init.has_input(5)) init.fail("update_rule '", rule, delta_ ? "' requires" : "' forbids", " the beta input");
    if (init.has_input(6) && !delta_) init.fail("update_rule '", rule, "' forbids the erase_gate input");
  }

  void compute(KernelContext& ctx) const override {
    visit_float_compute(ctx.input(0).dtype(), ctx, [&](auto tag) { run<typename decltype(tag)::type>(ctx); });
  }

 private:
  template <typename A>
  void run(KernelContext& ctx) const {
    const Tensor& q = ctx.input(0);
    const Tensor& k = ctx.input(1);
    const Tensor& v = ctx.input(2);
    for (const Tensor* t : {&q, &k, &v})
      if (t->rank() != 3) ctx.fail("query, key and value must be 3-D [batch, sequence, heads * size]");
    const int64_t b = q.dim(0), steps = q.dim(1);
    if (q.dim(2) % q_heads_ != 0 || v.dim(2) % kv_heads_ != 0) ctx.fail("hidden sizes do not split into the heads");
    const int64_t dk = q.dim(2) / q_heads_, dv = v.dim(2) / kv_heads_, group = q_heads_ / kv_heads_;
    if (k.dim(0) != b || k.dim(1) != steps || k.dim(2) != kv_heads_ * dk || v.dim(0) != b || v.dim(1) != steps)
      ctx.fail("key/value shapes do not match the query");
    const AccInput<A> qv(q), kv(k), vv(v);
    std::vector<A> state(static_cast<size_t>(b * kv_heads_ * dk * dv), A(0));
    if (ctx.has_input(3)) {
      if (ctx.input(3).shape() != Shape{b, kv_heads_, dk, dv})
        ctx.fail("past_state shape ", shape_to_string(ctx.input(3).shape()), " is not [", b, ", ", kv_heads_, ", ", dk,
                 ", ", dv, "]");
      state = load_as<A>(ctx.input(3));
    }
    // decay: per KV head (last dim kv_heads) or per key feature (kv_heads * d_k); beta: per KV
    // head or shared (last dim 1); erase_gate: per key feature.
    // The per-step inputs are [batch, sequence, width]; their width is checked below.
    for (size_t i : {4, 5, 6})
      if (ctx.has_input(i) && (ctx.input(i).rank() != 3 || ctx.input(i).dim(0) != b || ctx.input(i).dim(1) != steps))
        ctx.fail("input ", i, " has shape ", shape_to_string(ctx.input(i).shape()), "; it must be [", b, ", ", steps,
                 ", width]");
    if (ctx.has_input(6) && ctx.input(6).dim(2) != kv_heads_ * dk)
      ctx.fail("erase_gate's last dimension must be kv_num_heads * d_k (", kv_heads_ * dk, ")");
    const std::vector<A> decay = ctx.has_input(4) ? load_as<A>(ctx.input(4)) : std::vector<A>();
    const std::vector<A> beta = ctx.has_input(5) ? load_as<A>(ctx.input(5)) : std::vector<A>();
    const std::vector<A> erase = ctx.has_input(6) ? load_as<A>(ctx.input(6)) : std::vector<A>();
    const int64_t decay_width = ctx.has_input(4) ? ctx.input(4).dim(2) : 0;
    const int64_t beta_width = ctx.has_input(5) ? ctx.input(5).dim(2) : 0;
    if (ctx.has_input(4) && decay_width != kv_heads_ && decay_width != kv_heads_ * dk)
      ctx.fail("decay's last dimension must be kv_num_heads or kv_num_heads * d_k");
    if (ctx.has_input(5) && beta_width != kv_heads_ && beta_width != 1)
      ctx.fail("beta's last dimension must be kv_num_heads or 1");
    const A scale = scale_ != 0.0f ? static_cast<A>(scale_) : A(1) / std::sqrt(static_cast<A>(dk));

    AccOutput<A> out(ctx, 0, q.dtype(), q.shape());
    std::vector<A> vt(static_cast<size_t>(dv)), retrieved(static_cast<size_t>(dv));
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t t = 0; t < steps; ++t) {
        const int64_t row = bi * steps + t;
        for (int64_t h = 0; h < kv_heads_; ++h) {
          A* s = state.data() + (bi * kv_heads_ + h) * dk * dv;
          const A* kt = kv.data() + row * kv_heads_ * dk + h * dk;
          const A* vsrc = vv.data() + row * kv_heads_ * dv + h * dv;
          if (gating_)
            for (int64_t d = 0; d < dk; ++d) {
              const A g = decay_width == kv_heads_ ? decay[row * kv_heads_ + h] : decay[row * decay_width + h * dk + d];
              for (int64_t m = 0; m < dv; ++m) s[d * dv + m] *= std::exp(g);
            }
          std::copy(vsrc, vsrc + dv, vt.begin());
          if (delta_) {
            std::fill(retrieved.begin(), retrieved.end(), A(0));
            for (int64_t d = 0; d < dk; ++d) {
              const A ke = erase.empty() ? kt[d] : erase[row * kv_heads_ * dk + h * dk + d] * kt[d];
              for (int64_t m = 0; m < dv; ++m) retrieved[m] += s[d * dv + m] * ke;
            }
            const A bt = beta[row * beta_width + (beta_width == 1 ? 0 : h)];
            for (int64_t m = 0; m < dv; ++m) vt[m] = bt * (vt[m] - retrieved[m]);
          }
          for (int64_t d = 0; d < dk; ++d)
            for (int64_t m = 0; m < dv; ++m) s[d * dv + m] += kt[d] * vt[m];
        }
        for (int64_t h = 0; h < q_heads_; ++h) {
          const A* s = state.data() + (bi * kv_heads_ + h / group) * dk * dv;
          const A* qt = qv.data() + row * q_heads_ * dk + h * dk;
          A* o = out.data() + row * q_heads_ * dv + h * dv;
          for (int64_t m = 0; m < dv; ++m) {
            A acc = 0;
            for (int64_t d = 0; d < dk; ++d) acc += qt[d] * s[d * dv + m];
            o[m] = scale * acc;
          }
        }
      }
    out.finish();
    const DType state_dtype = ctx.has_input(3) ? ctx.input(3).dtype() : q.dtype();
    emit_output(ctx, 1, state_dtype, Shape{b, kv_heads_, dk, dv}, state);
  }

  int64_t q_heads_, kv_heads_;
  float scale_;
  bool gating_ = false, delta_ = false;
};

/// softmax(mods(scale * Q K^T)) V over 4-D [batch, heads, seq, size] tensors, query heads grouped
/// onto key/value heads; score_mod and mask_mod run on the scores, prob_mod on the probabilities.
class FlexAttentionKernel : public Kernel {
 public:
  explicit FlexAttentionKernel(const KernelInit& init)
      : has_scale_(init.has_attr("scale")), scale_(init.attr_float("scale", 1.0f)) {
    for (const char* name : {"score_mod", "mask_mod", "prob_mod"})
      mods_.push_back(init.has_attr(name) ? init.subgraph(name) : nullptr);
  }

  void compute(KernelContext& ctx) const override {
    visit_float_compute(ctx.input(0).dtype(), ctx, [&](auto tag) { run<typename decltype(tag)::type>(ctx); });
  }

 private:
  /// Runs a modification subgraph on a [B, H, L, S] tensor held as A values.
  template <typename A>
  void apply(KernelContext& ctx, const Subgraph* graph, std::vector<A>& values, const Shape& shape, DType dtype) const {
    if (!graph) return;
    Tensor t(dtype, shape);
    store_to(t, values);
    std::vector<Value> out = ctx.run_subgraph(*graph, {Value(std::move(t))});
    if (out.size() != 1 || !out[0].is_tensor() || out[0].tensor().shape() != shape)
      ctx.fail("a modification subgraph must return one tensor of shape ", shape_to_string(shape));
    values = load_as<A>(out[0].tensor());
  }

  template <typename A>
  void run(KernelContext& ctx) const {
    const Tensor& q = ctx.input(0);
    const Tensor& k = ctx.input(1);
    const Tensor& v = ctx.input(2);
    if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4) ctx.fail("Q, K and V must be 4-D [batch, heads, seq, size]");
    const int64_t b = q.dim(0), hq = q.dim(1), len = q.dim(2), d = q.dim(3);
    const int64_t hk = k.dim(1), s = k.dim(2), dv = v.dim(3);
    if (k.dim(0) != b || v.dim(0) != b || k.dim(3) != d || v.dim(1) != hk || v.dim(2) != s || hk == 0 || hq % hk != 0)
      ctx.fail("Q ", shape_to_string(q.shape()), ", K ", shape_to_string(k.shape()), " and V ",
               shape_to_string(v.shape()), " do not fit together");
    const int64_t group = hq / hk;
    const A scale = has_scale_ ? static_cast<A>(scale_) : A(1) / std::sqrt(static_cast<A>(d));
    const AccInput<A> qv(q), kv(k), vv(v);
    const Shape score_shape{b, hq, len, s};
    std::vector<A> scores(static_cast<size_t>(b * hq * len * s));
    for (int64_t bh = 0; bh < b * hq; ++bh) {
      const int64_t kh = (bh / hq) * hk + (bh % hq) / group;
      for (int64_t i = 0; i < len; ++i)
        for (int64_t j = 0; j < s; ++j) {
          A dot = 0;
          for (int64_t e = 0; e < d; ++e) dot += qv[(bh * len + i) * d + e] * kv[(kh * s + j) * d + e];
          scores[(bh * len + i) * s + j] = dot * scale;
        }
    }
    apply(ctx, mods_[0].get(), scores, score_shape, q.dtype());
    apply(ctx, mods_[1].get(), scores, score_shape, q.dtype());
    // Softmax per row; a row whose scores are all -inf attends to nothing.
    for (int64_t r = 0; r < b * hq * len; ++r) {
      A* row = scores.data() + r * s;
      const A peak = s > 0 ? *std::max_element(row, row + s) : A(0);
      A sum = 0;
      for (int64_t j = 0; j < s; ++j) sum += row[j] = std::isinf(peak) && peak < 0 ? A(0) : std::exp(row[j] - peak);
      for (int64_t j = 0; j < s; ++j) row[j] = sum > A(0) ? row[j] / sum : A(0);
    }
    apply(ctx, mods_[2].get(), scores, score_shape, q.dtype());
    AccOutput<A> y(ctx, 0, q.dtype(), Shape{b, hq, len, dv});
    for (int64_t bh = 0; bh < b * hq; ++bh) {
      const int64_t kh = (bh / hq) * hk + (bh % hq) / group;
      for (int64_t i = 0; i < len; ++i)
        for (int64_t e = 0; e < dv; ++e) {
          A acc = 0;
          for (int64_t j = 0; j < s; ++j) acc += scores[(bh * len + i) * s + j] * vv[(kh * s + j) * dv + e];
          y[(bh * len + i) * dv + e] = acc;
        }
    }
    y.finish();
  }

  bool has_scale_;
  float scale_;
  std::vector<std::shared_ptr<Subgraph>> mods_;  // score_mod, mask_mod, prob_mod (null when absent)
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Attention", (23, 24, 25), AttentionKernel);
PARITY_REGISTER_KERNEL("", "LinearAttention", 27, LinearAttentionKernel);
PARITY_REGISTER_KERNEL("ai.onnx.preview", "FlexAttention", 1, FlexAttentionKernel);

}  // namespace parity::runtime::nn
