// Vectorized fp32 loops for the optimized elementwise kernels (binary arithmetic, activations,
// unary math), compiled twice — for the baseline x86-64 target and for AVX2 — and picked once at
// run time from the CPU's features, so the shared library stays portable.
//
// Every loop computes exactly the expression of the reference kernel (same operation order, no
// fused multiply-add), so results are bit-identical to the reference tier — except Sigmoid, SiLU,
// Tanh and Exp, which use a vectorizable exp polynomial (within about 1e-6 relative of libm's).
#pragma once

#include <algorithm>
#include <cstdint>

#include "runtime/cpu_isa.h"
#include "runtime/kernel.h"

namespace parity::runtime::ops::fast {

/// Elementwise operations the fast loops implement.
enum class EwOp : uint8_t {
  // binary
  kAdd,
  kSub,
  kMul,
  kDiv,
  // unary (parameters in EwUnary)
  kRelu,
  kLeakyRelu,    // p0 = alpha
  kClip,         // p0 = min, p1 = max
  kHardSigmoid,  // p0 = alpha, p1 = beta
  kHardSwish,
  kNeg,
  kAbs,
  kSqrt,
  kReciprocal,
  kSquare,    // Pow(x, 2)
  kSqrtPow,   // Pow(x, 0.5): like sqrt, but pow(-0, 0.5) = +0 and pow(-inf, 0.5) = +inf
  kSigmoid,
  kSilu,  // x * sigmoid(x)
  kTanh,
  kExp,
  kErf,
  kGelu,      // 0.5 x (1 + erf(x / sqrt 2)), erf by a vectorizable approximation (abs error < 2e-7)
  kGeluTanh,  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), the fast Tanh's formula
};

inline bool is_binary(EwOp op) { return op <= EwOp::kDiv; }

/// A unary operation with its attributes.
struct EwUnary {
  EwOp op = EwOp::kRelu;
  float p0 = 0.0f;
  float p1 = 0.0f;
};

/// The loop set for one instruction-set level.
struct EwLoops {
  /// y = op(a, b), elementwise over n (y may alias a or b).
  void (*binary_vv)(EwOp op, const float* a, const float* b, float* y, int64_t n);
  /// y = op(a, s) (y may alias a).
  void (*binary_vs)(EwOp op, const float* a, float s, float* y, int64_t n);
  /// y = op(s, b) (y may alias b).
  void (*binary_sv)(EwOp op, float s, const float* b, float* y, int64_t n);
  /// y = f(x) (y may alias x).
  void (*unary)(const EwUnary& f, const float* x, float* y, int64_t n);
  /// y[c, i] = x[c, i] * scale[c] + shift[c] for c < channels, i < inner (BatchNormalization).
  void (*scale_shift)(const float* x, const float* scale, const float* shift, float* y, int64_t channels,
                      int64_t inner);

  // Building blocks of the optimized normalization and attention kernels. The reductions keep 16
  // partial sums (so they vectorize), which orders the additions differently from the reference
  // kernels' single running sum: results agree within rounding, not bit for bit.

  /// Sum of x[i].
  float (*sum)(const float* x, int64_t n);
  /// Sum of (x[i] - shift)^2.
  float (*sum_squares)(const float* x, float shift, int64_t n);
  /// Largest x[i] (-inf when n is 0; NaN is ignored).
  float (*max)(const float* x, int64_t n);
  /// y[i] = exp(x[i] - shift) with the fast exp; returns the sum of the y[i] (y may alias x).
  float (*exp_shifted)(const float* x, float shift, float* y, int64_t n);
  /// y[i] += a * x[i].
  void (*axpy)(float a, const float* x, float* y, int64_t n);
  /// y[c] += sum over r < rows of x[r] * m[r * cols + c] (a row vector times a matrix; the
  /// attention kernel's scores against a transposed key block and its weighted sum of values).
  void (*vector_matrix_acc)(const float* x, const float* m, int64_t rows, int64_t cols, float* y);
  /// y[i] = x[i] * a * scale[i] (RMSNormalization's row).
  void (*scaled_product)(const float* x, float a, const float* scale, float* y, int64_t n);
};

/// The loop set of tier `isa` (AVX2 from kAvx2 up, else baseline).
const EwLoops& loops(KernelIsa isa);
/// The baseline loop set (tests compare it with the AVX2 one).
const EwLoops& baseline_loops();
/// The AVX2 set, or nullptr when the CPU lacks AVX2.
const EwLoops* avx2_loops();

/// Below this many elements a loop runs on the calling thread: waking threads costs more.
inline constexpr int64_t kMinParallelElements = 1 << 15;

/// Runs fn(begin, end) over [0, n) in at most ctx.num_threads() chunks of at least `min_chunk`
/// elements each (serially when n is small). Chunk bounds are multiples of 16 except the last.
template <typename Fn>
void parallel_chunks(KernelContext& ctx, int64_t n, int64_t min_chunk, Fn&& fn) {
  const int64_t chunks = std::min<int64_t>(ctx.num_threads(), n / std::max<int64_t>(min_chunk, 1));
  if (chunks <= 1) {
    if (n > 0) fn(int64_t{0}, n);
    return;
  }
  auto bound = [&](int64_t c) { return c == chunks ? n : (n * c / chunks) & ~int64_t{15}; };
  ctx.parallel_for(chunks, [&](int64_t first, int64_t last) {
    for (int64_t c = first; c < last; ++c) {
      const int64_t begin = bound(c), end = bound(c + 1);
      if (begin < end) fn(begin, end);
    }
  });
}

}  // namespace parity::runtime::ops::fast
