#include "runtime/ops/nn/conv_depthwise_fast.h"

#include <algorithm>
#include <atomic>

#include "runtime/ops/nn/conv_epilogue.h"
#include "runtime/ops/nn/swish_fast.h"

// GCC 12 flags the intrinsics' own _mm512_undefined_ps operands as maybe-uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PARITY_DEPTHWISE_X86 1
#endif

namespace parity::runtime::nn {
namespace {

std::atomic<uint64_t> calls{0};

/// First and one-past-last kernel tap along one axis whose input index lies inside [0, size).
void tap_range(int64_t out, int64_t stride, int64_t pad, int64_t k, int64_t size, int64_t& lo, int64_t& hi) {
  const int64_t start = out * stride - pad;
  lo = std::max<int64_t>(0, -start);
  hi = std::min<int64_t>(k, size - start);
}

void depthwise_scalar(const float* const* rows, const DepthwiseWeights& w, const DepthwiseGeometry& g, int64_t oy,
                      float* y_row, const PointwiseEpilogue& e) {
  const int64_t c = w.channels;
  int64_t ky0, ky1;
  tap_range(oy, g.stride_h, g.pad_top, w.kh, g.in_h, ky0, ky1);
  for (int64_t ox = 0; ox < g.out_w; ++ox) {
    int64_t kx0, kx1;
    tap_range(ox, g.stride_w, g.pad_left, w.kw, g.in_w, kx0, kx1);
    float* out = y_row + ox * c;
    for (int64_t k = 0; k < c; ++k) out[k] = w.bias[k];
    for (int64_t ky = ky0; ky < ky1; ++ky)
      for (int64_t kx = kx0; kx < kx1; ++kx) {
        const float* in = rows[ky] + (ox * g.stride_w - g.pad_left + kx) * c;
        const float* tap = w.packed.data() + (ky * w.kw + kx) * w.padded;
        for (int64_t k = 0; k < c; ++k) out[k] += in[k] * tap[k];
      }
    for (int64_t k = 0; k < c; ++k) out[k] = activate(out[k], e);
  }
}

#if PARITY_DEPTHWISE_X86
/// X output pixels from `ox` on, channels [cb, cb + 16) (`mask` the valid ones), taps
/// [ky0, ky1) x [kx0, kx1) that lie inside the input for all X of them; rows[ky] is the input
/// row tap row ky reads.
template <int X, bool kFull>
__attribute__((target("avx512f"), always_inline)) inline void depthwise_block(const float* const* rows,
                                                              const DepthwiseWeights& w, const DepthwiseGeometry& g,
                                                              int64_t ox,
                                                              int64_t ky0, int64_t ky1, int64_t kx0, int64_t kx1,
                                                              int64_t cb, __mmask16 mask, float* y_row,
                                                              const PointwiseEpilogue& e) {
  const int64_t c = w.channels;
  __m512 acc[X];
  const __m512 bias = _mm512_loadu_ps(w.bias.data() + cb);
#pragma GCC unroll 8
  for (int j = 0; j < X; ++j) acc[j] = bias;
  const int64_t pixel_step = g.stride_w * c;
  for (int64_t ky = ky0; ky < ky1; ++ky) {
    const float* row = rows[ky] + (ox * g.stride_w - g.pad_left) * c + cb;
    const float* taps = w.packed.data() + ky * w.kw * w.padded + cb;
    for (int64_t kx = kx0; kx < kx1; ++kx) {
      const __m512 tap = _mm512_loadu_ps(taps + kx * w.padded);
      const float* in = row + kx * c;
#pragma GCC unroll 8
      for (int j = 0; j < X; ++j) {
        const __m512 v = kFull ? _mm512_loadu_ps(in + j * pixel_step) : _mm512_maskz_loadu_ps(mask, in + j * pixel_step);
        acc[j] = _mm512_fmadd_ps(v, tap, acc[j]);
      }
    }
  }
  float* out = y_row + ox * c + cb;
#pragma GCC unroll 8
  for (int j = 0; j < X; ++j) {
    if (kFull) _mm512_storeu_ps(out + j * c, activate_vector(acc[j], e));
    else _mm512_mask_storeu_ps(out + j * c, mask, activate_vector(acc[j], e));
  }
}

/// X output pixels from `ox` on, channels [c0, c1).
template <int X>
__attribute__((target("avx512f"))) void depthwise_pixels(const float* const* rows, const DepthwiseWeights& w,
                                                         const DepthwiseGeometry& g, int64_t ox, int64_t ky0,
                                                         int64_t ky1, int64_t kx0, int64_t kx1, int64_t c0, int64_t c1,
                                                         float* y_row, const PointwiseEpilogue& e) {
  for (int64_t cb = c0; cb < c1; cb += 16) {
    const int64_t left = w.channels - cb;
    const __mmask16 mask = static_cast<__mmask16>(left >= 16 ? 0xFFFF : (1u << left) - 1);
    if (left >= 16) depthwise_block<X, true>(rows, w, g, ox, ky0, ky1, kx0, kx1, cb, mask, y_row, e);
    else depthwise_block<X, false>(rows, w, g, ox, ky0, ky1, kx0, kx1, cb, mask, y_row, e);
  }
}

__attribute__((target("avx512f"))) void depthwise_row_avx512(const float* const* rows, const DepthwiseWeights& w,
                                                             const DepthwiseGeometry& g, int64_t oy, float* y_row,
                                                             const PointwiseEpilogue& e) {
  int64_t ky0, ky1;
  tap_range(oy, g.stride_h, g.pad_top, w.kh, g.in_h, ky0, ky1);
  // Output columns whose every tap lies inside the input: [inner0, inner1).
  const int64_t inner0 = std::min(g.out_w, (g.pad_left + g.stride_w - 1) / g.stride_w);
  const int64_t inner1 =
      std::max(inner0, std::min(g.out_w, g.in_w - w.kw + g.pad_left >= 0 ? (g.in_w - w.kw + g.pad_left) / g.stride_w + 1 : 0));
  // Pixels outer, channels inner: a block's input pixels (all their channels) stay in L1 while
  // every channel vector of the block is computed. (Channels outer walked the rows once per 16
  // channels, with every load a new line: 4x slower on 72 channels.) Wide layers go through
  // the row once per group of channels whose taps fit in 16 KB of L1 (1152 channels of 5x5:
  // 450 KB of taps, read again for every pixel otherwise).
  const int64_t group = std::max<int64_t>(1, (16 << 10) / (w.kh * w.kw * 64)) * 16;
  for (int64_t c0 = 0; c0 < w.channels; c0 += group) {
    const int64_t c1 = std::min(w.channels, c0 + group);
    auto pixels = [&](int64_t ox, int64_t count, int64_t kx0, int64_t kx1) {
      switch (count) {
        case 8: depthwise_pixels<8>(rows, w, g, ox, ky0, ky1, kx0, kx1, c0, c1, y_row, e); break;
        case 4: depthwise_pixels<4>(rows, w, g, ox, ky0, ky1, kx0, kx1, c0, c1, y_row, e); break;
        case 2: depthwise_pixels<2>(rows, w, g, ox, ky0, ky1, kx0, kx1, c0, c1, y_row, e); break;
        default: depthwise_pixels<1>(rows, w, g, ox, ky0, ky1, kx0, kx1, c0, c1, y_row, e); break;
      }
    };
    auto edge = [&](int64_t ox) {  // a column whose window sticks out of the input
      int64_t kx0, kx1;
      tap_range(ox, g.stride_w, g.pad_left, w.kw, g.in_w, kx0, kx1);
      pixels(ox, 1, kx0, kx1);
    };
    for (int64_t ox = 0; ox < inner0; ++ox) edge(ox);
    int64_t ox = inner0;
    for (; ox + 8 <= inner1; ox += 8) pixels(ox, 8, 0, w.kw);
    for (; ox + 4 <= inner1; ox += 4) pixels(ox, 4, 0, w.kw);
    for (; ox + 2 <= inner1; ox += 2) pixels(ox, 2, 0, w.kw);
    for (; ox < inner1; ++ox) pixels(ox, 1, 0, w.kw);
    for (ox = inner1; ox < g.out_w; ++ox) edge(ox);
  }
}
#endif

}  // namespace

bool depthwise_direct_available(KernelIsa isa) {
#if PARITY_DEPTHWISE_X86
  return isa >= KernelIsa::kAvx512;
#else
  (void)isa;
  return false;
#endif
}

DepthwiseWeights pack_depthwise_weights(const float* weights, int64_t channels, int64_t kh, int64_t kw,
                                        const float* bias, KernelIsa isa) {
  DepthwiseWeights w;
  w.isa = isa;
  w.channels = channels;
  w.padded = (channels + 15) / 16 * 16;
  w.kh = kh;
  w.kw = kw;
  w.packed.assign(static_cast<size_t>(kh * kw * w.padded), 0.f);
  w.bias.assign(static_cast<size_t>(w.padded), 0.f);
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t t = 0; t < kh * kw; ++t) w.packed[t * w.padded + c] = weights[c * kh * kw + t];
  if (bias) std::copy(bias, bias + channels, w.bias.begin());
  return w;
}

void depthwise_row_from(const float* const* rows, const DepthwiseWeights& w, const DepthwiseGeometry& g, int64_t oy,
                        float* y_row, const PointwiseEpilogue& epilogue, const float* swish_alpha) {
#if PARITY_DEPTHWISE_X86
  if (depthwise_direct_available(w.isa)) depthwise_row_avx512(rows, w, g, oy, y_row, epilogue);
  else depthwise_scalar(rows, w, g, oy, y_row, epilogue);
#else
  depthwise_scalar(rows, w, g, oy, y_row, epilogue);
#endif
  if (swish_alpha) swish_in_place(y_row, g.out_w * w.channels, *swish_alpha, w.isa);
}

void depthwise_rows(const float* x, const DepthwiseWeights& w, const DepthwiseGeometry& g, int64_t row_begin,
                    int64_t row_end, float* y, const PointwiseEpilogue& epilogue, const float* swish_alpha) {
  calls.fetch_add(1, std::memory_order_relaxed);
  std::vector<const float*> rows(static_cast<size_t>(w.kh));
  for (int64_t oy = row_begin; oy < row_end; ++oy) {
    for (int64_t ky = 0; ky < w.kh; ++ky) {
      const int64_t iy = oy * g.stride_h - g.pad_top + ky;
      rows[ky] = iy >= 0 && iy < g.in_h ? x + iy * g.in_w * w.channels : nullptr;
    }
    depthwise_row_from(rows.data(), w, g, oy, y + oy * g.out_w * w.channels, epilogue, swish_alpha);
  }
}

uint64_t depthwise_direct_calls() { return calls.load(std::memory_order_relaxed); }

}  // namespace parity::runtime::nn
