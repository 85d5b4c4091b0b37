// Spec: https://onnx.ai/onnx/operators/onnx__Attention.html
// Optimized Attention (opsets 23, 24 and 25, float32), beside the reference kernel in
// attention.cpp: blocked, streaming ("online") softmax, so no score matrix is materialized.
//
// Work is split into tasks of (batch, key/value head, block of query tokens); a task holds the
// rows of every query head that shares the key/value head (grouped-query attention reads each
// key block once for the whole group). For each block of kBlockKeys keys the task transposes the
// keys and copies the values into contiguous scratch, then per row: scores = q . K^T * scale
// (vectorized row-times-matrix), softcap, the mask bias (boolean or additive, broadcast, read in
// place), causal / sliding-window masking; the running maximum, running sum and output
// accumulator are rescaled when the maximum grows (exp(old - new)), and the block's
// probabilities are added in. Keys past the causal frontier of the whole query block, and keys
// past a batch's nonpad_kv_seqlen, are skipped. The result is divided by the running sum at the end (0 for a row whose keys are all masked, as
// in the reference). With fewer tasks than threads (decoding one token), each task's keys are
// split over the threads and the partial results merged (the same rescaling). The past/present
// key-value cache is read in place, the present outputs are written by copying.
//
// Results agree with the reference within float rounding (different summation order, the fast
// exp), not bit for bit. Declined at plan time: the fp64 oracle, the qk_matmul_output output,
// declared non-float32 inputs. Run on the reference kernel: other dtypes, empty tensors and every
// malformed shape (the reference kernel reports those).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/kernel_preferences.h"
#include "runtime/ops/common/elementwise_fast.h"
#include "runtime/ops/common/reference_chain.h"

namespace parity::runtime::nn {
namespace {

namespace fast = ops::fast;

/// Keys per block: a transposed key block and a value block of 64-float heads fit in L1.
constexpr int64_t kBlockKeys = 64;
/// Query rows (heads of a group x query tokens) a task aims for: enough to amortize the block copies.
constexpr int64_t kRowsPerTask = 32;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

/// Q, K, V layout: 4-D [batch, heads, seq, head] or 3-D [batch, seq, heads * head].
struct Layout {
  int64_t batch = 0, heads = 0, seq = 0, head_size = 0;
  bool packed = false;

  int64_t offset(int64_t b, int64_t h, int64_t s) const {
    return packed ? ((b * seq + s) * heads + h) * head_size : ((b * heads + h) * seq + s) * head_size;
  }
};

std::optional<Layout> layout_of(const Tensor& t, int64_t num_heads_attr) {
  const Shape& s = t.shape();
  if (t.rank() == 4) return Layout{s[0], s[1], s[2], s[3], false};
  if (t.rank() != 3 || num_heads_attr <= 0 || s[2] % num_heads_attr != 0) return std::nullopt;
  return Layout{s[0], num_heads_attr, s[1], s[2] / num_heads_attr, true};
}

/// The attention mask, read in place: broadcast to [batch, q_heads, q_seq, mask_len].
struct MaskView {
  const float* additive = nullptr;
  const bool* boolean = nullptr;
  int64_t dims[4] = {1, 1, 1, 1};

  /// Start of the mask row for query (b, h, i).
  int64_t row(int64_t b, int64_t h, int64_t i) const {
    const int64_t bi = dims[0] == 1 ? 0 : b, hi = dims[1] == 1 ? 0 : h, ii = dims[2] == 1 ? 0 : i;
    return ((bi * dims[1] + hi) * dims[2] + ii) * dims[3];
  }
};

class AttentionFast final : public Kernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    if (init.precision() != Precision::kFloat32) return nullptr;
    if (init.num_outputs() > 3 && init.has_output(3)) return nullptr;  // the QK output: reference
    for (size_t i : {0, 1, 2, 4, 5}) {
      const DType d = init.input_dtype(i);
      if (init.has_input(i) && d != DType::kFloat32 && d != DType::kUndefined) return nullptr;
    }
    const DType mask = init.input_dtype(3);
    if (init.has_input(3) && mask != DType::kFloat32 && mask != DType::kBool && mask != DType::kUndefined)
      return nullptr;
    return std::unique_ptr<Kernel>(new AttentionFast(init));
  }

  void compute(KernelContext& ctx) const override {
    const std::optional<Dims> d = resolve(ctx);
    if (!d) return reference_.compute(ctx);
    run(ctx, *d);
  }

 private:
  explicit AttentionFast(const KernelInit& init)
      : reference_(init.create_reference_kernel(), init.num_inputs()),
        isa_(kernel_isa(init)),
        is_causal_(init.attr_int("is_causal", 0) != 0),
        q_num_heads_(init.attr_int("q_num_heads", 0)),
        kv_num_heads_(init.attr_int("kv_num_heads", 0)),
        has_scale_(init.has_attr("scale")),
        scale_(init.attr_float("scale", 1.0f)),
        softcap_(init.attr_float("softcap", 0.0f)),
        left_window_(init.attr_int("left_window_size", -1)),
        right_window_(init.attr_int("right_window_size", -1)) {}

  struct Dims {
    Layout q, k, v;
    int64_t past = 0, total = 0, group = 1;
    bool has_past = false;
    MaskView mask;
    bool has_mask = false;
    std::vector<int64_t> nonpad;  // nonpad_kv_seqlen: valid keys per batch (padded static caches)
  };

  /// The run's shapes, or nullopt for anything the fast path leaves to the reference kernel.
  std::optional<Dims> resolve(const KernelContext& ctx) const {
    for (size_t i : {0, 1, 2, 4, 5})
      if (ctx.has_input(i) && ctx.input(i).dtype() != DType::kFloat32) return std::nullopt;
    const Tensor& q = ctx.input(0);
    const Tensor& k = ctx.input(1);
    const Tensor& v = ctx.input(2);
    if (q.rank() != k.rank() || q.rank() != v.rank()) return std::nullopt;
    const bool packed = q.rank() == 3;
    auto lq = layout_of(q, packed ? q_num_heads_ : 0);
    auto lk = layout_of(k, packed ? kv_num_heads_ : 0);
    auto lv = layout_of(v, packed ? kv_num_heads_ : 0);
    if (!lq || !lk || !lv) return std::nullopt;
    Dims d{*lq, *lk, *lv};
    if (d.k.batch != d.q.batch || d.v.batch != d.q.batch || d.k.heads != d.v.heads || d.k.seq != d.v.seq ||
        d.k.head_size != d.q.head_size || d.k.heads == 0 || d.q.heads % d.k.heads != 0)
      return std::nullopt;
    if (q.numel() == 0 || d.q.head_size == 0 || d.v.head_size == 0) return std::nullopt;
    d.group = d.q.heads / d.k.heads;
    d.has_past = ctx.has_input(4);
    if (d.has_past != ctx.has_input(5)) return std::nullopt;
    if (d.has_past) {
      const Shape& pk = ctx.input(4).shape();
      const Shape& pv = ctx.input(5).shape();
      if (pk.size() != 4 || pk[0] != d.q.batch || pk[1] != d.k.heads || pk[3] != d.k.head_size) return std::nullopt;
      if (pv.size() != 4 || pv[0] != d.q.batch || pv[1] != d.k.heads || pv[2] != pk[2] || pv[3] != d.v.head_size)
        return std::nullopt;
      d.past = pk[2];
    }
    d.total = d.past + d.k.seq;
    if (ctx.has_input(6)) {
      const Tensor& nonpad = ctx.input(6);
      if (nonpad.dtype() != DType::kInt64 || nonpad.numel() != d.q.batch) return std::nullopt;
      d.nonpad.assign(nonpad.data<int64_t>(), nonpad.data<int64_t>() + nonpad.numel());
      // Out-of-range counts are the reference kernel's error to report.
      for (int64_t count : d.nonpad)
        if (count < 0 || count > d.total) return std::nullopt;
    }
    if (ctx.has_input(3)) {
      const Tensor& m = ctx.input(3);
      if (m.rank() < 1 || m.rank() > 4) return std::nullopt;
      if (m.dtype() == DType::kFloat32) d.mask.additive = m.data<float>();
      else if (m.dtype() == DType::kBool) d.mask.boolean = m.data<bool>();
      else return std::nullopt;
      for (int64_t i = 0; i < m.rank(); ++i) d.mask.dims[4 - m.rank() + i] = m.dim(i);
      const int64_t want[3] = {d.q.batch, d.q.heads, d.q.seq};
      for (int i = 0; i < 3; ++i)
        if (d.mask.dims[i] != 1 && d.mask.dims[i] != want[i]) return std::nullopt;
      d.has_mask = true;
    }
    return d;
  }

  /// The last key query i of batch b may see under causal masking (bottom-right aligned: after
  /// the past cache, or after nonpad_kv_seqlen[b] - q_seq cached tokens).
  int64_t frontier(int64_t i, int64_t b, const Dims& d) const {
    if (d.has_past) return i + d.past;
    if (!d.nonpad.empty()) return i + d.nonpad[b] - d.q.seq;
    return i;
  }

  /// True when causal or window masking removes key j for query i of batch b.
  bool structurally_masked(int64_t i, int64_t j, int64_t b, const Dims& d) const {
    const int64_t f = frontier(i, b, d);
    if (is_causal_ && j > f) return true;
    if (left_window_ >= 0 && j < f - left_window_) return true;
    if (right_window_ >= 0 && !is_causal_ && j > f + right_window_) return true;
    return false;
  }

  /// Running state of one query row.
  struct Row {
    int64_t b = 0, h = 0, i = 0;
    const float* q = nullptr;
    int64_t mask_row = 0;
    float max = kNegInf, sum = 0.0f;
  };

  void run(KernelContext& ctx, const Dims& d) const {
    const float* qd = ctx.input(0).data<float>();
    const float* kd = ctx.input(1).data<float>();
    const float* vd = ctx.input(2).data<float>();
    const float* past_k = d.has_past ? ctx.input(4).data<float>() : nullptr;
    const float* past_v = d.has_past ? ctx.input(5).data<float>() : nullptr;
    const int64_t dk = d.q.head_size, dv = d.v.head_size;
    // Key/value token j of batch b, head kh: from the past cache, then the new tokens.
    auto key_row = [&](int64_t b, int64_t kh, int64_t j) {
      return j < d.past ? past_k + ((b * d.k.heads + kh) * d.past + j) * dk : kd + d.k.offset(b, kh, j - d.past);
    };
    auto value_row = [&](int64_t b, int64_t kh, int64_t j) {
      return j < d.past ? past_v + ((b * d.v.heads + kh) * d.past + j) * dv : vd + d.v.offset(b, kh, j - d.past);
    };

    const Shape y_shape = d.q.packed ? Shape{d.q.batch, d.q.seq, d.q.heads * dv} : Shape{d.q.batch, d.q.heads, d.q.seq, dv};
    float* yd = ctx.allocate_output_uninitialized(0, DType::kFloat32, y_shape).data<float>();
    const Layout y_layout{d.q.batch, d.q.heads, d.q.seq, dv, d.q.packed};

    const float scale = has_scale_ ? scale_ : 1.0f / std::sqrt(static_cast<float>(dk));
    const int64_t tokens_per_task = std::clamp<int64_t>(kRowsPerTask / d.group, 1, d.q.seq);
    const int64_t token_blocks = (d.q.seq + tokens_per_task - 1) / tokens_per_task;
    const int64_t tasks = d.q.batch * d.k.heads * token_blocks;
    const int64_t max_rows = d.group * tokens_per_task;
    const fast::EwLoops& loops = fast::loops(isa_);

    // A task's rows (every query head of its key/value head, for its query tokens) and the keys
    // they can see: those after the causal frontier of the block's last query, or past the
    // batch's valid keys, are masked for every row.
    struct Task {
      int64_t b = 0, kh = 0, rows = 0, key_end = 0;
    };
    auto task_rows = [&](int64_t task, std::vector<Row>& rows) {
      Task t;
      t.b = task / (d.k.heads * token_blocks);
      t.kh = (task / token_blocks) % d.k.heads;
      const int64_t i0 = (task % token_blocks) * tokens_per_task;
      const int64_t i1 = std::min(i0 + tokens_per_task, d.q.seq);
      for (int64_t g = 0; g < d.group; ++g)
        for (int64_t i = i0; i < i1; ++i) {
          const int64_t h = t.kh * d.group + g;
          rows[t.rows++] = Row{t.b, h, i, qd + d.q.offset(t.b, h, i), d.has_mask ? d.mask.row(t.b, h, i) : 0};
        }
      t.key_end = is_causal_ ? std::min(d.total, frontier(i1 - 1, t.b, d) + 1) : d.total;
      if (!d.nonpad.empty()) t.key_end = std::min(t.key_end, d.nonpad[t.b]);
      return t;
    };

    // Fewer tasks than threads (one decoded token, few key/value heads): each task's keys are
    // split into ranges of whole blocks, each folded into its own partial maximum, sum and
    // accumulator per row, merged at the end.
    const int64_t key_blocks = (d.total + kBlockKeys - 1) / kBlockKeys;
    // (At least two blocks per range: a merge costs about one block.)
    const int64_t splits = std::max<int64_t>(1, std::min<int64_t>(ctx.num_threads() / tasks, key_blocks / 2));
    const int64_t slot = dv + 2;  // a row's partial: accumulator, maximum, sum
    std::vector<float> partials(splits > 1 ? static_cast<size_t>(tasks * splits * max_rows * slot) : 0);

    ctx.parallel_for(tasks * splits, [&](int64_t begin, int64_t end) {
      std::vector<float> keys_t(static_cast<size_t>(dk * kBlockKeys));   // [dk, block]
      std::vector<float> values(static_cast<size_t>(kBlockKeys * dv));   // [block, dv]
      std::vector<float> scores(static_cast<size_t>(kBlockKeys));
      std::vector<Row> rows(static_cast<size_t>(max_rows));
      std::vector<float> acc(static_cast<size_t>(max_rows * dv));
      for (int64_t item = begin; item < end; ++item) {
        const int64_t task = item / splits, split = item % splits;
        const Task t = task_rows(task, rows);
        std::fill(acc.begin(), acc.begin() + t.rows * dv, 0.0f);
        const int64_t blocks = t.key_end > 0 ? (t.key_end + kBlockKeys - 1) / kBlockKeys : 0;
        const int64_t first = blocks * split / splits, last = blocks * (split + 1) / splits;
        for (int64_t j0 = first * kBlockKeys; j0 < std::min(last * kBlockKeys, t.key_end); j0 += kBlockKeys) {
          const int64_t bk = std::min(kBlockKeys, t.key_end - j0);
          for (int64_t jj = 0; jj < bk; ++jj) {
            const float* kr = key_row(t.b, t.kh, j0 + jj);
            for (int64_t e = 0; e < dk; ++e) keys_t[e * bk + jj] = kr[e];
            std::memcpy(values.data() + jj * dv, value_row(t.b, t.kh, j0 + jj), sizeof(float) * dv);
          }
          for (int64_t r = 0; r < t.rows; ++r)
            add_block(loops, d, rows[r], j0, bk, scale, keys_t.data(), values.data(), scores.data(),
                      acc.data() + r * dv);
        }
        for (int64_t r = 0; r < t.rows; ++r) {
          const float* a = acc.data() + r * dv;
          if (splits > 1) {
            float* p = partials.data() + ((task * splits + split) * max_rows + r) * slot;
            std::copy(a, a + dv, p);
            p[dv] = rows[r].max;
            p[dv + 1] = rows[r].sum;
            continue;
          }
          float* out = yd + y_layout.offset(t.b, rows[r].h, rows[r].i);
          const float sum = rows[r].sum;
          for (int64_t e = 0; e < dv; ++e) out[e] = sum > 0.0f ? a[e] / sum : 0.0f;
        }
      }
    });
    if (splits > 1) {
      ctx.parallel_for(tasks, [&](int64_t begin, int64_t end) {
        std::vector<Row> rows(static_cast<size_t>(max_rows));
        for (int64_t task = begin; task < end; ++task) {
          const Task t = task_rows(task, rows);
          for (int64_t r = 0; r < t.rows; ++r) {
            const float* first = partials.data() + (task * splits * max_rows + r) * slot;
            auto part = [&](int64_t split) { return first + split * max_rows * slot; };
            float peak = kNegInf;
            for (int64_t sp = 0; sp < splits; ++sp) peak = std::max(peak, part(sp)[dv]);
            float* out = yd + y_layout.offset(t.b, rows[r].h, rows[r].i);
            std::fill(out, out + dv, 0.0f);
            if (peak == kNegInf) continue;  // every key masked
            float sum = 0.0f;
            for (int64_t sp = 0; sp < splits; ++sp) {
              const float* p = part(sp);
              if (p[dv] == kNegInf) continue;
              const float weight = std::exp(p[dv] - peak);
              sum += p[dv + 1] * weight;
              loops.axpy(weight, p, out, dv);
            }
            for (int64_t e = 0; e < dv; ++e) out[e] = sum > 0.0f ? out[e] / sum : 0.0f;
          }
        }
      });
    }
    write_present(ctx, 1, d, d.k, dk, key_row);
    write_present(ctx, 2, d, d.v, dv, value_row);
  }

  /// Folds keys [j0, j0 + bk) into one query row's running maximum, sum and accumulator.
  void add_block(const fast::EwLoops& loops, const Dims& d, Row& row, int64_t j0, int64_t bk, float scale,
                 const float* keys_t, const float* values, float* scores, float* acc) const {
    std::fill(scores, scores + bk, 0.0f);
    loops.vector_matrix_acc(row.q, keys_t, d.q.head_size, bk, scores);
    for (int64_t jj = 0; jj < bk; ++jj) {
      float s = scores[jj] * scale;
      if (softcap_ > 0.0f) s = softcap_ * std::tanh(s / softcap_);
      scores[jj] = s;
    }
    if (d.has_mask) {
      const int64_t mask_len = d.mask.dims[3];
      for (int64_t jj = 0; jj < bk; ++jj) {
        const int64_t j = j0 + jj;
        if (j >= mask_len) scores[jj] = kNegInf;
        else if (d.mask.boolean) scores[jj] = d.mask.boolean[row.mask_row + j] ? scores[jj] : kNegInf;
        else scores[jj] += d.mask.additive[row.mask_row + j];
      }
    }
    // Causal masking alone touches only the blocks that reach past the row's frontier.
    const bool windowed = left_window_ >= 0 || right_window_ >= 0;
    if (windowed || (is_causal_ && j0 + bk - 1 > frontier(row.i, row.b, d)))
      for (int64_t jj = 0; jj < bk; ++jj)
        if (structurally_masked(row.i, j0 + jj, row.b, d)) scores[jj] = kNegInf;
    const float block_max = loops.max(scores, bk);
    const float new_max = std::max(row.max, block_max);
    if (new_max == kNegInf) return;  // every key so far is masked
    if (new_max > row.max && row.max != kNegInf) {
      const float rescale = std::exp(row.max - new_max);
      row.sum *= rescale;
      for (int64_t e = 0; e < d.v.head_size; ++e) acc[e] *= rescale;
    }
    row.max = new_max;
    row.sum += loops.exp_shifted(scores, new_max, scores, bk);
    loops.vector_matrix_acc(scores, values, bk, d.v.head_size, acc);
  }

  /// present_key / present_value: the past cache followed by the new tokens, [batch, kv_heads,
  /// total, head_size].
  template <typename RowFn>
  static void write_present(KernelContext& ctx, size_t output, const Dims& d, const Layout& l, int64_t head_size,
                            const RowFn& row_of) {
    if (!ctx.has_output(output)) return;
    Tensor& t = ctx.allocate_output_uninitialized(output, DType::kFloat32, Shape{d.q.batch, l.heads, d.total, head_size});
    float* dst = t.data<float>();
    for (int64_t b = 0; b < d.q.batch; ++b)
      for (int64_t h = 0; h < l.heads; ++h)
        for (int64_t j = 0; j < d.total; ++j)
          std::memcpy(dst + ((b * l.heads + h) * d.total + j) * head_size, row_of(b, h, j), sizeof(float) * head_size);
  }

  ops::ReferenceChain reference_;
  KernelIsa isa_;  // the vector tier of the elementwise loops
  bool is_causal_;
  int64_t q_num_heads_, kv_num_heads_;
  bool has_scale_;
  float scale_, softcap_;
  int64_t left_window_, right_window_;
};

}  // namespace

PARITY_REGISTER_OPTIMIZED_KERNEL("", "Attention", (23, 24, 25), AttentionFast);

}  // namespace parity::runtime::nn
