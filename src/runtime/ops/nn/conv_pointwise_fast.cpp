#include "runtime/ops/nn/conv_pointwise_fast.h"

#include <algorithm>
#include <atomic>

#include "runtime/ops/nn/conv_epilogue.h"
#include "runtime/ops/nn/conv_lanes.h"

// GCC 12 flags the intrinsics' own _mm512_undefined_ps operands as maybe-uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

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

}  // namespace
}  // namespace parity::runtime::nn

#define PARITY_CONV_LOOPS "runtime/ops/nn/conv_pointwise_fast.inc"
#include "runtime/ops/nn/conv_lanes_tiers.inc"
#undef PARITY_CONV_LOOPS

namespace parity::runtime::nn {

bool pointwise_direct_available(KernelIsa isa) {
#if PARITY_CONV_LANES_X86
  return isa >= KernelIsa::kAvx2;
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
#if PARITY_CONV_LANES_X86
  if (w.isa >= KernelIsa::kAvx2 && w.schedule == DirectLoopSchedule::kEmulated16Lanes)
    return emulated16::pointwise(x, rows, w, y, epilogue);
  if (w.isa >= KernelIsa::kAvx512) return avx512::pointwise(x, rows, w, y, epilogue);
  if (w.isa >= KernelIsa::kAvx2) return avx2::pointwise(x, rows, w, y, epilogue);
#endif
  pointwise_scalar(x, rows, w, y, epilogue);
}

uint64_t pointwise_direct_calls() { return calls.load(std::memory_order_relaxed); }

}  // namespace parity::runtime::nn
