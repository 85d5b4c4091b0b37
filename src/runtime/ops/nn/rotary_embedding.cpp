// Spec: https://onnx.ai/onnx/operators/onnx__RotaryEmbedding.html
// RotaryEmbedding (opset 23).
// Rotates the first rotary_embedding_dim features of every head by position-dependent angles
// (cos/sin caches, indexed by position_ids when given), in halves or interleaved pairs.
#include <vector>

#include "runtime/ops/nn/nn_common.h"

namespace parity::runtime::nn {
namespace {

class RotaryEmbeddingKernel : public Kernel {
 public:
  explicit RotaryEmbeddingKernel(const KernelInit& init)
      : interleaved_(init.attr_int("interleaved", 0) != 0),
        num_heads_(init.attr_int("num_heads", 0)),
        rotary_dim_(init.attr_int("rotary_embedding_dim", 0)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    visit_float_compute(x.dtype(), ctx, [&](auto tag) { run<typename decltype(tag)::type>(ctx); });
  }

 private:
  template <typename A>
  void run(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    // Both layouts are walked as (batch, seq, head): 4-D input is [batch, heads, seq, head_size],
    // 3-D input is [batch, seq, heads * head_size].
    int64_t batch = 0, seq = 0, heads = 0, head_size = 0;
    if (x.rank() == 4) {
      batch = s[0], heads = s[1], seq = s[2], head_size = s[3];
    } else if (x.rank() == 3) {
      if (num_heads_ <= 0) ctx.fail("3-D input needs the num_heads attribute");
      if (s[2] % num_heads_ != 0) ctx.fail("hidden size ", s[2], " is not a multiple of num_heads ", num_heads_);
      batch = s[0], seq = s[1], heads = num_heads_, head_size = s[2] / num_heads_;
    } else {
      ctx.fail("input must be 3-D or 4-D, got shape ", shape_to_string(s));
    }
    const int64_t rot = rotary_dim_ > 0 ? rotary_dim_ : head_size;
    if (rot > head_size || rot % 2 != 0)
      ctx.fail("rotary_embedding_dim ", rot, " must be even and at most the head size ", head_size);
    const int64_t half = rot / 2;

    const Tensor& cos_t = ctx.input(1);
    const Tensor& sin_t = ctx.input(2);
    if (cos_t.shape() != sin_t.shape()) ctx.fail("cos_cache and sin_cache shapes differ");
    if (cos_t.rank() == 0 || cos_t.shape().back() != half)
      ctx.fail("cos_cache last dimension must be rotary_embedding_dim / 2 = ", half, ", got shape ",
               shape_to_string(cos_t.shape()));
    std::vector<int64_t> positions;
    if (ctx.has_input(3)) {
      positions = read_int64s(ctx.input(3));
      if (ctx.input(3).shape() != Shape{batch, seq})
        ctx.fail("position_ids shape ", shape_to_string(ctx.input(3).shape()), " is not [", batch, ", ", seq, "]");
      if (cos_t.rank() != 2) ctx.fail("with position_ids, cos_cache must be 2-D [max_position, ", half, "]");
    } else if (cos_t.shape() != Shape{batch, seq, half}) {
      ctx.fail("without position_ids, cos_cache must be [", batch, ", ", seq, ", ", half, "], got ",
               shape_to_string(cos_t.shape()));
    }
    const std::vector<A> cos_v = load_as<A>(cos_t), sin_v = load_as<A>(sin_t);
    const AccInput<A> xv(x);
    AccOutput<A> y(ctx, 0, x.dtype(), s);

    auto offset = [&](int64_t b, int64_t t, int64_t h) {
      return x.rank() == 4 ? ((b * heads + h) * seq + t) * head_size : ((b * seq + t) * heads + h) * head_size;
    };
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = 0; t < seq; ++t) {
        int64_t row = b * seq + t;  // row of the cache for this token
        if (!positions.empty()) {
          row = positions[b * seq + t];
          if (row < 0 || row >= cos_t.shape()[0])
            ctx.fail("position id ", row, " is outside the cache of ", cos_t.shape()[0], " positions");
        }
        const A* c = cos_v.data() + row * half;
        const A* sn = sin_v.data() + row * half;
        for (int64_t h = 0; h < heads; ++h) {
          const A* in = xv.data() + offset(b, t, h);
          A* out = y.data() + offset(b, t, h);
          for (int64_t k = 0; k < half; ++k) {
            const int64_t i1 = interleaved_ ? 2 * k : k;
            const int64_t i2 = interleaved_ ? 2 * k + 1 : k + half;
            out[i1] = c[k] * in[i1] - sn[k] * in[i2];
            out[i2] = sn[k] * in[i1] + c[k] * in[i2];
          }
          for (int64_t e = rot; e < head_size; ++e) out[e] = in[e];
        }
      }
    y.finish();
  }

  bool interleaved_;
  int64_t num_heads_, rotary_dim_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "RotaryEmbedding", 23, RotaryEmbeddingKernel);

}  // namespace parity::runtime::nn
