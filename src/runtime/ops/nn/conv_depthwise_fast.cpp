#include "runtime/ops/nn/conv_depthwise_fast.h"

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

}  // namespace
}  // namespace parity::runtime::nn

#define PARITY_CONV_LOOPS "runtime/ops/nn/conv_depthwise_fast.inc"
#include "runtime/ops/nn/conv_lanes_tiers.inc"
#undef PARITY_CONV_LOOPS

namespace parity::runtime::nn {

bool depthwise_direct_available(KernelIsa isa) {
#if PARITY_CONV_LANES_X86
  return isa >= KernelIsa::kAvx2;
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
#if PARITY_CONV_LANES_X86
  if (w.isa >= KernelIsa::kAvx2 && w.schedule == DirectLoopSchedule::kEmulated16Lanes)
    emulated16::depthwise_row(rows, w, g, oy, y_row, epilogue);
  else if (w.isa >= KernelIsa::kAvx512)
    avx512::depthwise_row(rows, w, g, oy, y_row, epilogue);
  else if (w.isa >= KernelIsa::kAvx2)
    avx2::depthwise_row(rows, w, g, oy, y_row, epilogue);
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
