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
void copy_strided(const float* from, int64_t step, float* d, int64_t n, KernelIsa isa) {
  if (step == 1) {
    std::copy(from, from + n, d);
    return;
  }
#if PARITY_STEM_X86
  if (step == 2 && stem_direct_available(isa)) {
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
          if (m1 > m0) copy_strided(src + (m0 * s + first) * step, s * step, d + m0, m1 - m0, w.isa);
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
/// The taps a run of output pixels reads: per tap, the input's offset from the pixel's position
/// (x + ox * stride on an NCHW input, strip + ox on a strip) and the packed weights' offset.
struct TapList {
  std::vector<int64_t> x, w;
  void clear() {
    x.clear();
    w.clear();
  }
  void add(int64_t x_offset, int64_t w_offset) {
    x.push_back(x_offset);
    w.push_back(w_offset);
  }
};

/// One tap of channels_last_block: P inputs `S` floats apart from xs on, NB weight vectors at ws.
template <int P, int NB, int S>
__attribute__((target("avx512f"), always_inline)) inline void channels_last_tap(const float* xs, const float* ws,
                                                                                __m512 (&acc)[P][NB]) {
  __m512 wv[NB];
#pragma GCC unroll 8
  for (int b = 0; b < NB; ++b) wv[b] = _mm512_loadu_ps(ws + 16 * b);
#pragma GCC unroll 24
  for (int p = 0; p < P; ++p) {
    const __m512 xv = _mm512_set1_ps(xs[p * S]);
#pragma GCC unroll 8
    for (int b = 0; b < NB; ++b) acc[p][b] = _mm512_fmadd_ps(xv, wv[b], acc[p][b]);
  }
}

/// Channels-last output: P pixels (their inputs `S` floats apart from `base` on) x NB vectors of
/// 16 output channels from `first` on; `last` masks the final vector's channels past the layer's
/// end.
template <int P, int NB, int S>
__attribute__((target("avx512f"), always_inline)) inline void channels_last_block(
    const float* base, const TapList& taps, const StemWeights& w, int64_t first, __mmask16 last, float* y,
    const PointwiseEpilogue& e) {
  __m512 acc[P][NB];
#pragma GCC unroll 8
  for (int b = 0; b < NB; ++b) {
    const __m512 v = _mm512_loadu_ps(w.bias.data() + first + 16 * b);
#pragma GCC unroll 24
    for (int p = 0; p < P; ++p) acc[p][b] = v;
  }
  const int64_t n = static_cast<int64_t>(taps.x.size());
  const float* wp = w.packed.data() + first;
  int64_t t = 0;
  if constexpr (P * NB <= 2) {
    // Too few accumulators to hide the multiply-add latency: a second set takes every other tap.
    __m512 odd[P][NB];
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p)
#pragma GCC unroll 8
      for (int b = 0; b < NB; ++b) odd[p][b] = _mm512_setzero_ps();
    for (; t + 1 < n; t += 2) {
      channels_last_tap<P, NB, S>(base + taps.x[t], wp + taps.w[t], acc);
      channels_last_tap<P, NB, S>(base + taps.x[t + 1], wp + taps.w[t + 1], odd);
    }
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p)
#pragma GCC unroll 8
      for (int b = 0; b < NB; ++b) acc[p][b] = _mm512_add_ps(acc[p][b], odd[p][b]);
  }
  for (; t < n; ++t) channels_last_tap<P, NB, S>(base + taps.x[t], wp + taps.w[t], acc);
#pragma GCC unroll 24
  for (int p = 0; p < P; ++p) {
    float* out = y + p * w.out + first;
#pragma GCC unroll 8
    for (int b = 0; b + 1 < NB; ++b) _mm512_storeu_ps(out + 16 * b, activate_vector(acc[p][b], e));
    _mm512_mask_storeu_ps(out + 16 * (NB - 1), last, activate_vector(acc[p][NB - 1], e));
  }
}

/// Output pixels [ox0, ox1) of a row, output channels [first, first + 16 * NB).
template <int NB, int S>
__attribute__((target("avx512f"))) void channels_last_group(const float* base, const TapList& taps,
                                                            const StemWeights& w, int64_t first, int64_t ox0,
                                                            int64_t ox1, float* row, const PointwiseEpilogue& e) {
  // About 24 accumulators leave room for the NB weight vectors and the broadcast.
  constexpr int P = NB == 1 ? 16 : 24 / NB;
  const int64_t tail = std::min(w.out, first + 16 * NB) - (first + 16 * (NB - 1));  // 1..16
  const __mmask16 last = static_cast<__mmask16>(tail >= 16 ? 0xFFFF : (1u << tail) - 1);
  int64_t ox = ox0;
  for (; ox + P <= ox1; ox += P)
    channels_last_block<P, NB, S>(base + ox * S, taps, w, first, last, row + ox * w.out, e);
  // The rest in halving blocks: one pixel at a time, each block would be a chain of dependent
  // multiply-adds (14 such pixels per row took a third of a 16-channel layer's time).
  if constexpr (P >= 16) {
    if (ox + 8 <= ox1) channels_last_block<8, NB, S>(base + ox * S, taps, w, first, last, row + ox * w.out, e), ox += 8;
  }
  if constexpr (P >= 8) {
    if (ox + 4 <= ox1) channels_last_block<4, NB, S>(base + ox * S, taps, w, first, last, row + ox * w.out, e), ox += 4;
  }
  if constexpr (P >= 4) {
    if (ox + 2 <= ox1) channels_last_block<2, NB, S>(base + ox * S, taps, w, first, last, row + ox * w.out, e), ox += 2;
  }
  for (; ox < ox1; ++ox) channels_last_block<1, NB, S>(base + ox * S, taps, w, first, last, row + ox * w.out, e);
}

template <int S>
__attribute__((target("avx512f"))) void channels_last_pixels(const float* base, const TapList& taps,
                                                             const StemWeights& w, int64_t ox0, int64_t ox1,
                                                             float* row, const PointwiseEpilogue& e) {
  for (int64_t first = 0; first < w.out; first += 64) {
    switch (std::min<int64_t>(4, (w.out - first + 15) / 16)) {
      case 1: channels_last_group<1, S>(base, taps, w, first, ox0, ox1, row, e); break;
      case 2: channels_last_group<2, S>(base, taps, w, first, ox0, ox1, row, e); break;
      case 3: channels_last_group<3, S>(base, taps, w, first, ox0, ox1, row, e); break;
      default: channels_last_group<4, S>(base, taps, w, first, ox0, ox1, row, e); break;
    }
  }
}

/// First and one-past-last kernel tap along one axis whose input index lies inside [0, size).
void tap_range(int64_t out, int64_t stride, int64_t pad, int64_t k, int64_t size, int64_t& lo, int64_t& hi) {
  const int64_t start = out * stride - pad;
  lo = std::max<int64_t>(0, -start);
  hi = std::max(lo, std::min<int64_t>(k, size - start));
}

/// Channels-last output from an NCHW input of horizontal stride S, read in place (no strip):
/// the taps outside the input are left out of each pixel's list instead.
template <int S>
__attribute__((target("avx512f"))) void channels_last_row_direct(const float* x, const StemWeights& w,
                                                                 const DepthwiseGeometry& g, int64_t oy, float* row,
                                                                 const PointwiseEpilogue& e, TapList& taps) {
  int64_t ky0, ky1;
  tap_range(oy, g.stride_h, g.pad_top, w.kh, g.in_h, ky0, ky1);
  const int64_t iy0 = oy * g.stride_h - g.pad_top;
  auto list = [&](int64_t kx0, int64_t kx1) {
    taps.clear();
    for (int64_t c = 0; c < w.in; ++c)
      for (int64_t ky = ky0; ky < ky1; ++ky)
        for (int64_t kx = kx0; kx < kx1; ++kx)
          taps.add((c * g.in_h + iy0 + ky) * g.in_w + kx - g.pad_left, ((c * w.kh + ky) * w.kw + kx) * w.padded);
  };
  // Output columns whose every tap lies inside the input: [inner0, inner1).
  const int64_t inner0 = std::min(g.out_w, (g.pad_left + S - 1) / S);
  const int64_t reach = g.in_w - w.kw + g.pad_left;
  const int64_t inner1 = std::max(inner0, std::min(g.out_w, reach >= 0 ? reach / S + 1 : 0));
  list(0, w.kw);
  channels_last_pixels<S>(x, taps, w, inner0, inner1, row, e);
  for (int64_t ox = 0; ox < g.out_w; ++ox) {
    if (ox == inner0) ox = std::max(ox, inner1);
    if (ox >= g.out_w) break;
    int64_t kx0, kx1;
    tap_range(ox, S, g.pad_left, w.kw, g.in_w, kx0, kx1);
    list(kx0, kx1);
    channels_last_pixels<S>(x, taps, w, ox, ox + 1, row, e);
  }
}

/// Channels-last output from a strip.
__attribute__((target("avx512f"))) void channels_last_row(const Strip& strip, const StemWeights& w,
                                                          const DepthwiseGeometry& g, float* row,
                                                          const PointwiseEpilogue& e, TapList& taps) {
  taps.clear();
  for (size_t t = 0; t < strip.offsets.size(); ++t) taps.add(strip.offsets[t], static_cast<int64_t>(t) * w.padded);
  channels_last_pixels<1>(strip.data.data(), taps, w, 0, g.out_w, row, e);
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

bool stem_direct_available(KernelIsa isa) {
#if PARITY_STEM_X86
  return isa >= KernelIsa::kAvx512;
#else
  (void)isa;
  return false;
#endif
}

StemWeights pack_stem_weights(const float* weights, int64_t out, int64_t in, int64_t kh, int64_t kw,
                              const float* bias, KernelIsa isa) {
  StemWeights w;
  w.isa = isa;
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
#if PARITY_STEM_X86
  TapList taps;
  // An NCHW input feeding a channels-last output is read in place: broadcasts need no strip.
  const bool in_place = stem_direct_available(w.isa) && y_channels_last && !x_channels_last && g.stride_w <= 2;
#endif
  for (int64_t oy = row_begin; oy < row_end; ++oy) {
#if PARITY_STEM_X86
    float* row = y + oy * g.out_w * w.out;
    if (in_place && g.stride_w == 1) channels_last_row_direct<1>(x, w, g, oy, row, epilogue, taps);
    else if (in_place) channels_last_row_direct<2>(x, w, g, oy, row, epilogue, taps);
    else if (stem_direct_available(w.isa)) {
      strip.fill(x, x_channels_last, w, g, oy);
      if (y_channels_last) channels_last_row(strip, w, g, row, epilogue, taps);
      else planar_row(strip, w, g, y + oy * g.out_w, plane, epilogue);
    } else {
      strip.fill(x, x_channels_last, w, g, oy);
      row_scalar(strip, w, g, oy, y, y_channels_last, epilogue);
    }
#else
    strip.fill(x, x_channels_last, w, g, oy);
    row_scalar(strip, w, g, oy, y, y_channels_last, epilogue);
#endif
    if (swish_alpha) {
      if (y_channels_last) swish_in_place(y + oy * g.out_w * w.out, g.out_w * w.out, *swish_alpha, w.isa);
      else
        for (int64_t o = 0; o < w.out; ++o) swish_in_place(y + o * plane + oy * g.out_w, g.out_w, *swish_alpha, w.isa);
    }
  }
}

uint64_t stem_direct_calls() { return calls.load(std::memory_order_relaxed); }

}  // namespace parity::runtime::nn
