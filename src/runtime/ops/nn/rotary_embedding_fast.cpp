// Spec: https://onnx.ai/onnx/operators/onnx__RotaryEmbedding.html
// Optimized RotaryEmbedding (opset 23, float32), beside the reference kernel in
// rotary_embedding.cpp: reads the cos/sin caches in place (no converted copies), writes the
// output once (no zero fill), rotates each head's halves with loops the compiler vectorizes
// (interleaved pairs are rotated pair by pair), and splits the tokens over the executor's
// threads. The arithmetic is the reference's, so results are bit-identical. Other dtypes and
// malformed shapes or position ids run the reference kernel, which reports the errors.
#include <algorithm>
#include <cstring>
#include <memory>

#include "runtime/ops/common/elementwise_fast.h"
#include "runtime/ops/common/reference_chain.h"

namespace parity::runtime::nn {
namespace {

namespace fast = ops::fast;

bool rotary_float_or_unknown(DType d) { return d == DType::kFloat32 || d == DType::kUndefined; }

/// The rotation of one head: out = in rotated by the angles of (c, s) over the first 2 * half
/// features, the rest copied.
void rotate_head(const float* in, const float* c, const float* s, float* out, int64_t half, int64_t head_size,
                 bool interleaved) {
  if (interleaved) {
    for (int64_t k = 0; k < half; ++k) {
      const float x1 = in[2 * k], x2 = in[2 * k + 1];
      out[2 * k] = c[k] * x1 - s[k] * x2;
      out[2 * k + 1] = s[k] * x1 + c[k] * x2;
    }
  } else {
    const float* in2 = in + half;
    float* out2 = out + half;
    for (int64_t k = 0; k < half; ++k) out[k] = c[k] * in[k] - s[k] * in2[k];
    for (int64_t k = 0; k < half; ++k) out2[k] = s[k] * in[k] + c[k] * in2[k];
  }
  if (2 * half < head_size) std::memcpy(out + 2 * half, in + 2 * half, sizeof(float) * (head_size - 2 * half));
}

class RotaryEmbeddingFast final : public Kernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    if (init.precision() != Precision::kFloat32) return nullptr;
    for (size_t i = 0; i < 3; ++i)
      if (!rotary_float_or_unknown(init.input_dtype(i))) return nullptr;
    return std::unique_ptr<Kernel>(new RotaryEmbeddingFast(init));
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& cos_t = ctx.input(1);
    const Tensor& sin_t = ctx.input(2);
    if (x.dtype() != DType::kFloat32 || cos_t.dtype() != DType::kFloat32 || sin_t.dtype() != DType::kFloat32)
      return reference_.compute(ctx);
    const Shape& s = x.shape();
    int64_t batch = 0, seq = 0, heads = 0, head_size = 0;
    if (x.rank() == 4) {
      batch = s[0], heads = s[1], seq = s[2], head_size = s[3];
    } else if (x.rank() == 3 && num_heads_ > 0 && s[2] % num_heads_ == 0) {
      batch = s[0], seq = s[1], heads = num_heads_, head_size = s[2] / num_heads_;
    } else {
      return reference_.compute(ctx);
    }
    const int64_t rot = rotary_dim_ > 0 ? rotary_dim_ : head_size;
    if (rot > head_size || rot % 2 != 0 || cos_t.shape() != sin_t.shape() || cos_t.rank() == 0 ||
        cos_t.shape().back() != rot / 2)
      return reference_.compute(ctx);
    const int64_t half = rot / 2;
    const int64_t* positions = nullptr;
    if (ctx.has_input(3)) {
      const Tensor& ids = ctx.input(3);
      if (ids.dtype() != DType::kInt64 || ids.shape() != Shape{batch, seq} || cos_t.rank() != 2)
        return reference_.compute(ctx);
      positions = ids.data<int64_t>();
      const int64_t rows = cos_t.dim(0);
      if (std::any_of(positions, positions + batch * seq, [rows](int64_t p) { return p < 0 || p >= rows; }))
        return reference_.compute(ctx);  // reports the position outside the cache
    } else if (cos_t.shape() != Shape{batch, seq, half}) {
      return reference_.compute(ctx);
    }
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, s);
    const float* src = x.data<float>();
    const float* cos_v = cos_t.data<float>();
    const float* sin_v = sin_t.data<float>();
    float* dst = y.data<float>();
    const bool packed = x.rank() == 3;
    const int64_t min_tokens = std::max<int64_t>(1, fast::kMinParallelElements / std::max<int64_t>(heads * head_size, 1));
    fast::parallel_chunks(ctx, batch * seq, min_tokens, [&](int64_t begin, int64_t end) {
      for (int64_t token = begin; token < end; ++token) {
        const int64_t b = token / seq, t = token % seq;
        const int64_t row = positions ? positions[token] : token;
        const float* c = cos_v + row * half;
        const float* sn = sin_v + row * half;
        for (int64_t h = 0; h < heads; ++h) {
          const int64_t offset = packed ? (token * heads + h) * head_size : ((b * heads + h) * seq + t) * head_size;
          rotate_head(src + offset, c, sn, dst + offset, half, head_size, interleaved_);
        }
      }
    });
  }

 private:
  explicit RotaryEmbeddingFast(const KernelInit& init)
      : reference_(init.create_reference_kernel(), init.num_inputs()),
        interleaved_(init.attr_int("interleaved", 0) != 0),
        num_heads_(init.attr_int("num_heads", 0)),
        rotary_dim_(init.attr_int("rotary_embedding_dim", 0)) {}

  ops::ReferenceChain reference_;
  bool interleaved_;
  int64_t num_heads_, rotary_dim_;
};

}  // namespace

PARITY_REGISTER_OPTIMIZED_KERNEL("", "RotaryEmbedding", 23, RotaryEmbeddingFast);

}  // namespace parity::runtime::nn
