#include "runtime/ops/nn/conv_stem_fast.h"

#include <algorithm>
#include <atomic>

#include "runtime/ops/nn/conv_epilogue.h"
#include "runtime/ops/nn/swish_fast.h"

// GCC 12 flags the intrinsics' own _mm512_undefined_ps operands as maybe-uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PARITY_STEM_X86 1
#endif

namespace parity::runtime::nn {
namespace {

std::atomic<uint64_t> calls{0};

#if PARITY_STEM_X86
/// d[m] = from[2 * m] for m in [0, n): the even columns of an NCHW row, 16 at a time (a stride-2
/// layer's strips are its whole input, copied about 1.5 times).
__attribute__((target("avx512f"))) void copy_even(const float* from, float* d, int64_t n) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  int64_t m = 0;
  for (; m + 16 < n; m += 16) {  // from[2 * m + 31] is still inside the row
    const __m512 lo = _mm512_loadu_ps(from + 2 * m), hi = _mm512_loadu_ps(from + 2 * m + 16);
    _mm512_storeu_ps(d + m, _mm512_permutex2var_ps(lo, even, hi));
  }
  if (m < n) {  // the last 1..16: loads stop at from[2 * (n - 1)]
    const int64_t need = 2 * (n - m) - 1;
    const __mmask16 lo_mask = static_cast<__mmask16>(need >= 16 ? 0xFFFF : (1u << need) - 1);
    const __mmask16 hi_mask = static_cast<__mmask16>(need > 16 ? (1u << (need - 16)) - 1 : 0);
    const __m512 lo = _mm512_maskz_loadu_ps(lo_mask, from + 2 * m), hi = _mm512_maskz_loadu_ps(hi_mask, from + 2 * m + 16);
    _mm512_mask_storeu_ps(d + m, static_cast<__mmask16>((1u << (n - m)) - 1), _mm512_permutex2var_ps(lo, even, hi));
  }
}
#endif

/// d[m] = from[m * step] for m in [0, n).
void copy_strided(const float* from, int64_t step, float* d, int64_t n) {
  if (n <= 0) return;
  if (step == 1) {
    std::copy(from, from + n, d);
    return;
  }
#if PARITY_STEM_X86
  if (step == 2 && stem_direct_available()) {
    copy_even(from, d, n);
    return;
  }
#endif
  for (int64_t m = 0; m < n; ++m) d[m] = from[m * step];
}

/// One output row's inputs: for each input channel, kernel row and stride phase r, the padded
/// input row's columns r, r + stride, r + 2 * stride, ... (`length` of them, zeros outside the
/// input). Output pixel ox's tap t then reads data[offsets[t] + ox].
struct Strip {
  int64_t length = 0;
  std::vector<float> data;
  std::vector<int32_t> offsets;  // per tap, in ONNX order (input channel, kernel row, column)

  Strip(const StemWeights& w, const DepthwiseGeometry& g) {
    const int64_t s = g.stride_w;
    // Room for whole 16-pixel vectors past the row's end, plus the taps' reach.
    length = ((g.out_w + 15) / 16 * 16 + (w.kw - 1) / s + 1 + 15) / 16 * 16;
    data.assign(static_cast<size_t>(w.in * w.kh * s * length), 0.f);
    for (int64_t c = 0; c < w.in; ++c)
      for (int64_t ky = 0; ky < w.kh; ++ky)
        for (int64_t kx = 0; kx < w.kw; ++kx)
          offsets.push_back(static_cast<int32_t>(((c * w.kh + ky) * s + kx % s) * length + kx / s));
  }

  void fill(const float* x, bool channels_last, const StemWeights& w, const DepthwiseGeometry& g, int64_t oy) {
    const int64_t s = g.stride_w;
    for (int64_t c = 0; c < w.in; ++c)
      for (int64_t ky = 0; ky < w.kh; ++ky) {
        const int64_t iy = oy * g.stride_h - g.pad_top + ky;
        const bool inside = iy >= 0 && iy < g.in_h;
        const float* src = !inside ? nullptr : channels_last ? x + iy * g.in_w * w.in + c : x + (c * g.in_h + iy) * g.in_w;
        const int64_t step = channels_last ? w.in : 1;
        for (int64_t r = 0; r < s; ++r) {
          float* d = data.data() + ((c * w.kh + ky) * s + r) * length;
          if (!inside) {
            std::fill(d, d + length, 0.f);
            continue;
          }
          // Columns m with input column m * s + r - pad_left inside [0, in_w).
          const int64_t first = r - g.pad_left;  // input column of m = 0
          const int64_t m0 = std::min(length, first >= 0 ? 0 : (-first + s - 1) / s);
          const int64_t m1 = std::max(m0, std::min(length, g.in_w - first > 0 ? (g.in_w - first + s - 1) / s : 0));
          std::fill(d, d + m0, 0.f);
          copy_strided(src + (m0 * s + first) * step, s * step, d + m0, m1 - m0);
          std::fill(d + m1, d + length, 0.f);
        }
      }
  }
};

void row_scalar(const Strip& strip, const StemWeights& w, const DepthwiseGeometry& g, int64_t oy, float* y,
                bool y_channels_last, const PointwiseEpilogue& e) {
  const int64_t taps = w.in * w.kh * w.kw, plane = g.out_h * g.out_w;
  for (int64_t o = 0; o < w.out; ++o)
    for (int64_t ox = 0; ox < g.out_w; ++ox) {
      float v = w.bias[o];
      for (int64_t t = 0; t < taps; ++t) v += strip.data[strip.offsets[t] + ox] * w.plain[o * taps + t];
      v = activate(v, e);
      if (y_channels_last) y[(oy * g.out_w + ox) * w.out + o] = v;
      else y[o * plane + oy * g.out_w + ox] = v;
    }
}

#if PARITY_STEM_X86
/// Channels-last output: P pixels (from the strip position `s` on) x NB vectors of 16 output
/// channels from `first` on; `last` masks the final vector's channels past the layer's end.
template <int P, int NB>
__attribute__((target("avx512f"), always_inline)) inline void channels_last_block(
    const float* s, const Strip& strip, const StemWeights& w, int64_t first, __mmask16 last, float* y,
    const PointwiseEpilogue& e) {
  __m512 acc[P][NB];
#pragma GCC unroll 8
  for (int b = 0; b < NB; ++b) {
    const __m512 v = _mm512_loadu_ps(w.bias.data() + first + 16 * b);
#pragma GCC unroll 24
    for (int p = 0; p < P; ++p) acc[p][b] = v;
  }
  const int64_t taps = static_cast<int64_t>(strip.offsets.size());
  const float* wp = w.packed.data() + first;
  for (int64_t t = 0; t < taps; ++t, wp += w.padded) {
    const float* xs = s + strip.offsets[t];
    __m512 wv[NB];
#pragma GCC unroll 8
    for (int b = 0; b < NB; ++b) wv[b] = _mm512_loadu_ps(wp + 16 * b);
#pragma GCC unroll 24
    for (int p = 0; p < P; ++p) {
      const __m512 xv = _mm512_set1_ps(xs[p]);
#pragma GCC unroll 8
      for (int b = 0; b < NB; ++b) acc[p][b] = _mm512_fmadd_ps(xv, wv[b], acc[p][b]);
    }
  }
#pragma GCC unroll 24
  for (int p = 0; p < P; ++p) {
    float* out = y + p * w.out + first;
#pragma GCC unroll 8
    for (int b = 0; b + 1 < NB; ++b) _mm512_storeu_ps(out + 16 * b, activate_vector(acc[p][b], e));
    _mm512_mask_storeu_ps(out + 16 * (NB - 1), last, activate_vector(acc[p][NB - 1], e));
  }
}

template <int NB>
__attribute__((target("avx512f"))) void channels_last_group(const Strip& strip, const StemWeights& w,
                                                            const DepthwiseGeometry& g, int64_t first, float* row,
                                                            const PointwiseEpilogue& e) {
  // About 24 accumulators leave room for the NB weight vectors and the broadcast.
  constexpr int P = NB == 1 ? 16 : 24 / NB;
  const int64_t tail = std::min(w.out, first + 16 * NB) - (first + 16 * (NB - 1));  // 1..16
  const __mmask16 last = static_cast<__mmask16>(tail >= 16 ? 0xFFFF : (1u << tail) - 1);
  const float* s = strip.data.data();
  int64_t ox = 0;
  for (; ox + P <= g.out_w; ox += P) channels_last_block<P, NB>(s + ox, strip, w, first, last, row + ox * w.out, e);
  for (; ox < g.out_w; ++ox) channels_last_block<1, NB>(s + ox, strip, w, first, last, row + ox * w.out, e);
}

__attribute__((target("avx512f"))) void channels_last_row(const Strip& strip, const StemWeights& w,
                                                          const DepthwiseGeometry& g, float* row,
                                                          const PointwiseEpilogue& e) {
  for (int64_t first = 0; first < w.out; first += 64) {
    switch (std::min<int64_t>(4, (w.out - first + 15) / 16)) {
      case 1: channels_last_group<1>(strip, w, g, first, row, e); break;
      case 2: channels_last_group<2>(strip, w, g, first, row, e); break;
      case 3: channels_last_group<3>(strip, w, g, first, row, e); break;
      default: channels_last_group<4>(strip, w, g, first, row, e); break;
    }
  }
}

/// NCHW output: O output channels from `o0` on x V vectors of 16 pixels from `ox` on; `last`
/// masks the final vector's pixels past the row's end. y points at channel o0's row.
template <int O, int V>
__attribute__((target("avx512f"), always_inline)) inline void planar_block(const Strip& strip, const StemWeights& w,
                                                                           int64_t o0, int64_t ox, __mmask16 last,
                                                                           float* y, int64_t plane,
                                                                           const PointwiseEpilogue& e) {
  __m512 acc[O][V];
#pragma GCC unroll 8
  for (int o = 0; o < O; ++o) {
    const __m512 v = _mm512_set1_ps(w.bias[o0 + o]);
#pragma GCC unroll 4
    for (int v2 = 0; v2 < V; ++v2) acc[o][v2] = v;
  }
  const int64_t taps = static_cast<int64_t>(strip.offsets.size());
  const float* s = strip.data.data() + ox;
  const float* wp = w.plain.data() + o0 * taps;
  for (int64_t t = 0; t < taps; ++t) {
    const float* xs = s + strip.offsets[t];
    __m512 xv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) xv[v] = _mm512_loadu_ps(xs + 16 * v);
#pragma GCC unroll 8
    for (int o = 0; o < O; ++o) {
      const __m512 wv = _mm512_set1_ps(wp[o * taps + t]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[o][v] = _mm512_fmadd_ps(xv[v], wv, acc[o][v]);
    }
  }
#pragma GCC unroll 8
  for (int o = 0; o < O; ++o) {
    float* out = y + o * plane + ox;
#pragma GCC unroll 4
    for (int v = 0; v + 1 < V; ++v) _mm512_storeu_ps(out + 16 * v, activate_vector(acc[o][v], e));
    _mm512_mask_storeu_ps(out + 16 * (V - 1), last, activate_vector(acc[o][V - 1], e));
  }
}

template <int O>
__attribute__((target("avx512f"))) void planar_channels(const Strip& strip, const StemWeights& w,
                                                        const DepthwiseGeometry& g, int64_t o0, float* y,
                                                        int64_t plane, const PointwiseEpilogue& e) {
  // O x 3 accumulators (24 for O = 8), the 3 input vectors and the broadcast weight.
  for (int64_t ox = 0; ox < g.out_w; ox += 48) {
    const int64_t left = g.out_w - ox, vectors = std::min<int64_t>(3, (left + 15) / 16);
    const int64_t in_last = left - 16 * (vectors - 1);  // pixels in the last vector, 1..16 or more
    const __mmask16 last = static_cast<__mmask16>(in_last >= 16 ? 0xFFFF : (1u << in_last) - 1);
    switch (vectors) {
      case 1: planar_block<O, 1>(strip, w, o0, ox, last, y, plane, e); break;
      case 2: planar_block<O, 2>(strip, w, o0, ox, last, y, plane, e); break;
      default: planar_block<O, 3>(strip, w, o0, ox, last, y, plane, e); break;
    }
  }
}

__attribute__((target("avx512f"))) void planar_row(const Strip& strip, const StemWeights& w,
                                                   const DepthwiseGeometry& g, float* row, int64_t plane,
                                                   const PointwiseEpilogue& e) {
  int64_t o = 0;
  for (; o + 8 <= w.out; o += 8) planar_channels<8>(strip, w, g, o, row + o * plane, plane, e);
  if (o + 4 <= w.out) planar_channels<4>(strip, w, g, o, row + o * plane, plane, e), o += 4;
  if (o + 2 <= w.out) planar_channels<2>(strip, w, g, o, row + o * plane, plane, e), o += 2;
  if (o < w.out) planar_channels<1>(strip, w, g, o, row + o * plane, plane, e);
}
#endif

}  // namespace

bool stem_direct_available() {
#if PARITY_STEM_X86
  static const bool available = __builtin_cpu_supports("avx512f");
  return available;
#else
  return false;
#endif
}

StemWeights pack_stem_weights(const float* weights, int64_t out, int64_t in, int64_t kh, int64_t kw,
                              const float* bias) {
  StemWeights w;
  w.in = in;
  w.out = out;
  w.kh = kh;
  w.kw = kw;
  w.padded = (out + 15) / 16 * 16;
  const int64_t taps = in * kh * kw;
  w.plain.assign(weights, weights + out * taps);
  w.packed.assign(static_cast<size_t>(taps * w.padded), 0.f);
  w.bias.assign(static_cast<size_t>(w.padded), 0.f);
  for (int64_t o = 0; o < out; ++o)
    for (int64_t t = 0; t < taps; ++t) w.packed[t * w.padded + o] = weights[o * taps + t];
  if (bias) std::copy(bias, bias + out, w.bias.begin());
  return w;
}

void stem_rows(const float* x, bool x_channels_last, const StemWeights& w, const DepthwiseGeometry& g,
               int64_t row_begin, int64_t row_end, float* y, bool y_channels_last, const PointwiseEpilogue& epilogue,
               const float* swish_alpha) {
  calls.fetch_add(1, std::memory_order_relaxed);
  Strip strip(w, g);
  const int64_t plane = g.out_h * g.out_w;
  for (int64_t oy = row_begin; oy < row_end; ++oy) {
    strip.fill(x, x_channels_last, w, g, oy);
#if PARITY_STEM_X86
    if (stem_direct_available()) {
      if (y_channels_last) channels_last_row(strip, w, g, y + oy * g.out_w * w.out, epilogue);
      else planar_row(strip, w, g, y + oy * g.out_w, plane, epilogue);
    } else {
      row_scalar(strip, w, g, oy, y, y_channels_last, epilogue);
    }
#else
    row_scalar(strip, w, g, oy, y, y_channels_last, epilogue);
#endif
    if (swish_alpha) {
      if (y_channels_last) swish_in_place(y + oy * g.out_w * w.out, g.out_w * w.out, *swish_alpha);
      else
        for (int64_t o = 0; o < w.out; ++o) swish_in_place(y + o * plane + oy * g.out_w, g.out_w, *swish_alpha);
    }
  }
}

uint64_t stem_direct_calls() { return calls.load(std::memory_order_relaxed); }

}  // namespace parity::runtime::nn
