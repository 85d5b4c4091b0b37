#include "runtime/ops/nn/conv_stem_fast.h"

#include <algorithm>
#include <atomic>

#include "runtime/ops/nn/conv_epilogue.h"
#include "runtime/ops/nn/conv_lanes.h"
#include "runtime/ops/nn/swish_fast.h"

// GCC 12 flags the intrinsics' own _mm512_undefined_ps operands as maybe-uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace parity::runtime::nn {
namespace {

std::atomic<uint64_t> calls{0};

#if PARITY_CONV_LANES_X86
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
#if PARITY_CONV_LANES_X86
  if (step == 2 && isa >= KernelIsa::kAvx512) {
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

/// First and one-past-last kernel tap along one axis whose input index lies inside [0, size).
void tap_range(int64_t out, int64_t stride, int64_t pad, int64_t k, int64_t size, int64_t& lo, int64_t& hi) {
  const int64_t start = out * stride - pad;
  lo = std::max<int64_t>(0, -start);
  hi = std::max(lo, std::min<int64_t>(k, size - start));
}

}  // namespace
}  // namespace parity::runtime::nn

#define PARITY_CONV_LOOPS "runtime/ops/nn/conv_stem_fast.inc"
#include "runtime/ops/nn/conv_lanes_tiers.inc"
#undef PARITY_CONV_LOOPS

namespace parity::runtime::nn {

bool stem_direct_available(KernelIsa isa) {
#if PARITY_CONV_LANES_X86
  return isa >= KernelIsa::kAvx2;
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
  TapList taps;
  const int64_t plane = g.out_h * g.out_w;
  for (int64_t oy = row_begin; oy < row_end; ++oy) {
#if PARITY_CONV_LANES_X86
    if (w.isa >= KernelIsa::kAvx2 && w.schedule == DirectLoopSchedule::kEmulated16Lanes)
      emulated16::stem_row(x, x_channels_last, w, g, oy, y, y_channels_last, epilogue, strip, taps);
    else if (w.isa >= KernelIsa::kAvx512)
      avx512::stem_row(x, x_channels_last, w, g, oy, y, y_channels_last, epilogue, strip, taps);
    else if (w.isa >= KernelIsa::kAvx2)
      avx2::stem_row(x, x_channels_last, w, g, oy, y, y_channels_last, epilogue, strip, taps);
    else
#endif
    {
      strip.fill(x, x_channels_last, w, g, oy);
      row_scalar(strip, w, g, oy, y, y_channels_last, epilogue);
    }
    if (swish_alpha) {
      if (y_channels_last) swish_in_place(y + oy * g.out_w * w.out, g.out_w * w.out, *swish_alpha, w.isa);
      else
        for (int64_t o = 0; o < w.out; ++o) swish_in_place(y + o * plane + oy * g.out_w, g.out_w, *swish_alpha, w.isa);
    }
  }
}

uint64_t stem_direct_calls() { return calls.load(std::memory_order_relaxed); }

}  // namespace parity::runtime::nn
