#include "runtime/ops/nn/conv_pointwise_fast.h"

#include <algorithm>
#include <atomic>

#include "runtime/ops/nn/conv_epilogue.h"

// GCC 12 flags the intrinsics' own _mm512_undefined_ps operands as maybe-uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PARITY_POINTWISE_X86 1
#endif

namespace parity::runtime::nn {
namespace {

std::atomic<uint64_t> calls{0};

void pointwise_scalar(const float* x, int64_t rows, const PointwiseWeights& w, float* y, const PointwiseEpilogue& e) {
  for (int64_t r = 0; r < rows; ++r) {
    float* out = y + r * w.out;
    for (int64_t o = 0; o < w.out; ++o) out[o] = w.bias[o];
    for (int64_t i = 0; i < w.in; ++i) {
      const float v = x[r * w.in + i];
      const float* wi = w.packed.data() + i * w.padded;
      for (int64_t o = 0; o < w.out; ++o) out[o] += v * wi[o];
    }
    for (int64_t o = 0; o < w.out; ++o) out[o] = activate(out[o] + (e.residual ? e.residual[r * w.out + o] : 0.f), e);
  }
}

#if PARITY_POINTWISE_X86
/// The epilogue on one vector of outputs at `at` (offset into y's and the residual's rows).
__attribute__((target("avx512f"))) inline __m512 finish(__m512 v, const PointwiseEpilogue& e, int64_t at, __mmask16 mask) {
  if (e.residual) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, e.residual + at));
  return activate_vector(v, e);
}

/// P pixels x NB vectors of 16 output channels (starting at channel `first`): P * NB
/// accumulators stay in registers through the reduction over the input channels; each step loads
/// NB weight vectors once and broadcasts one input value per pixel. `last` masks the final
/// vector's channels past the layer's end (the rows of y are `w.out` apart).
template <int P, int NB>
__attribute__((target("avx512f"))) inline void pointwise_block(const float* x, const PointwiseWeights& w, int64_t first,
                                                              __mmask16 last, float* y, const PointwiseEpilogue& e,
                                                              int64_t row) {
  __m512 acc[P][NB];
  const float* bias = w.bias.data() + first;
#pragma GCC unroll 8
  for (int b = 0; b < NB; ++b) {
    const __m512 v = _mm512_loadu_ps(bias + 16 * b);
#pragma GCC unroll 16
    for (int p = 0; p < P; ++p) acc[p][b] = v;
  }
  const float* wp = w.packed.data() + first;
  for (int64_t i = 0; i < w.in; ++i, wp += w.padded) {
    __m512 wv[NB];
#pragma GCC unroll 8
    for (int b = 0; b < NB; ++b) wv[b] = _mm512_loadu_ps(wp + 16 * b);
#pragma GCC unroll 16
    for (int p = 0; p < P; ++p) {
      const __m512 xv = _mm512_set1_ps(x[p * w.in + i]);
#pragma GCC unroll 8
      for (int b = 0; b < NB; ++b) acc[p][b] = _mm512_fmadd_ps(xv, wv[b], acc[p][b]);
    }
  }
#pragma GCC unroll 16
  for (int p = 0; p < P; ++p) {
    const int64_t at = (row + p) * w.out + first;
#pragma GCC unroll 8
    for (int b = 0; b + 1 < NB; ++b) _mm512_storeu_ps(y + at + 16 * b, finish(acc[p][b], e, at + 16 * b, 0xFFFF));
    _mm512_mask_storeu_ps(y + at + 16 * (NB - 1), last, finish(acc[p][NB - 1], e, at + 16 * (NB - 1), last));
  }
}

/// All rows for output channels [first, first + 16 * NB): blocks of P pixels, then single pixels.
template <int NB>
__attribute__((target("avx512f"))) void pointwise_channels(const float* x, int64_t rows, const PointwiseWeights& w,
                                                           int64_t first, float* y, const PointwiseEpilogue& e) {
  // About 24 accumulators leave room for the NB weight vectors and the broadcast.
  constexpr int P = NB == 1 ? 16 : 24 / NB;
  const int64_t end = std::min(w.out, first + 16 * NB);
  const int64_t tail = end - (first + 16 * (NB - 1));  // channels in the last vector, 1..16
  const __mmask16 last = static_cast<__mmask16>(tail >= 16 ? 0xFFFF : (1u << tail) - 1);
  int64_t r = 0;
  for (; r + P <= rows; r += P) pointwise_block<P, NB>(x + r * w.in, w, first, last, y, e, r);
  // The remainder in blocks of 8, 4, 2, 1 pixels: one pixel at a time is a chain of dependent
  // multiply-adds per vector, and a row of 56 pixels (the fused expand's unit) left 8 of them.
  if constexpr (P > 8)
    if (r + 8 <= rows) pointwise_block<8, NB>(x + r * w.in, w, first, last, y, e, r), r += 8;
  if constexpr (P > 4)
    if (r + 4 <= rows) pointwise_block<4, NB>(x + r * w.in, w, first, last, y, e, r), r += 4;
  if (r + 2 <= rows) pointwise_block<2, NB>(x + r * w.in, w, first, last, y, e, r), r += 2;
  if (r < rows) pointwise_block<1, NB>(x + r * w.in, w, first, last, y, e, r), r += 1;
}

__attribute__((target("avx512f"))) void pointwise_avx512(const float* x, int64_t rows, const PointwiseWeights& w,
                                                         float* y, const PointwiseEpilogue& e) {
  // Output channels in groups of up to 4 vectors (64 channels); the rows' inputs stay in L1
  // between the groups (callers pass tiles of a few dozen rows).
  for (int64_t first = 0; first < w.out; first += 64) {
    const int64_t vectors = std::min<int64_t>(4, (w.out - first + 15) / 16);
    switch (vectors) {
      case 1: pointwise_channels<1>(x, rows, w, first, y, e); break;
      case 2: pointwise_channels<2>(x, rows, w, first, y, e); break;
      case 3: pointwise_channels<3>(x, rows, w, first, y, e); break;
      default: pointwise_channels<4>(x, rows, w, first, y, e); break;
    }
  }
}
#endif

}  // namespace

bool pointwise_direct_available(KernelIsa isa) {
#if PARITY_POINTWISE_X86
  return isa >= KernelIsa::kAvx512;
#else
  (void)isa;
  return false;
#endif
}

PointwiseWeights pack_pointwise_weights(const float* weights, int64_t out, int64_t in, const float* bias,
                                        KernelIsa isa) {
  PointwiseWeights w;
  w.isa = isa;
  w.in = in;
  w.out = out;
  w.padded = (out + 15) / 16 * 16;
  w.packed.assign(static_cast<size_t>(in * w.padded), 0.f);
  w.bias.assign(static_cast<size_t>(w.padded), 0.f);
  for (int64_t o = 0; o < out; ++o)
    for (int64_t i = 0; i < in; ++i) w.packed[i * w.padded + o] = weights[o * in + i];
  if (bias) std::copy(bias, bias + out, w.bias.begin());
  return w;
}

void pointwise_rows(const float* x, int64_t rows, const PointwiseWeights& w, float* y, const PointwiseEpilogue& epilogue) {
  calls.fetch_add(1, std::memory_order_relaxed);
#if PARITY_POINTWISE_X86
  if (pointwise_direct_available(w.isa)) {
    pointwise_avx512(x, rows, w, y, epilogue);
    return;
  }
#endif
  pointwise_scalar(x, rows, w, y, epilogue);
}

uint64_t pointwise_direct_calls() { return calls.load(std::memory_order_relaxed); }

}  // namespace parity::runtime::nn
