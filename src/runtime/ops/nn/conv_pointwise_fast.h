#pragma once
// A direct vector loop (AVX-512 or AVX2, conv_lanes.h) for 1x1 stride-1 convolutions with few input
// channels, on channels-last maps: each output pixel is a row of [rows, in] x [in, out] products,
// computed a few pixels at a time with the output channels held in registers, and the fused tails
// applied to each tile while it is still in L1 (conv_dnnl.cpp calls it).
//
// Why: oneDNN 2.6's brgemm 1x1 kernel loses to ONNX Runtime by 1.5-3.5x on the high-resolution
// layers of the mobile networks, where the reduction is only 16-32 channels long (MobileNetV3's
// 16 -> 16 + residual Add at 112x112: 0.23 ms against ORT's 0.06 ms; EfficientNet-B0's 16 -> 96
// at 112x112: 0.65 ms against 0.39 ms), and its residual Add is an extra copy of the addend
// before the sum post-op. Here the addend is read by the tail loop of each tile.

#include <cstdint>
#include <vector>

#include "runtime/cpu_isa.h"

namespace parity::runtime::nn {

/// Whether the loop has a variant for this tier: AVX-512F (16 lanes) or AVX2 + FMA (8 lanes).
bool pointwise_direct_available(KernelIsa isa);

/// The vector schedule the direct loops run their weights' tier with. kTier: the tier's own (16
/// lanes on AVX-512, 8 on AVX2). kEmulated16Lanes, for tests: the AVX-512 tier's 16-lane schedule
/// (its block shapes, tails and masks, lane for lane its arithmetic) emulated with AVX2 + FMA, so
/// that CPUs without AVX-512 check it too; it needs a tier of AVX2 or above (below, the loops run
/// scalar either way).
enum class DirectLoopSchedule { kTier, kEmulated16Lanes };

/// ONNX 1x1 weights [out, in] repacked as [in][padded out] (out rounded up to 16, zeros in the
/// padding), with the bias padded the same way (zeros when there is none).
struct PointwiseWeights {
  int64_t in = 0, out = 0, padded = 0;
  std::vector<float> packed, bias;
  KernelIsa isa = KernelIsa::kBaseline;  // the tier pointwise_rows runs these weights at
  DirectLoopSchedule schedule = DirectLoopSchedule::kTier;
};
PointwiseWeights pack_pointwise_weights(const float* weights, int64_t out, int64_t in, const float* bias,
                                        KernelIsa isa);

/// What the loop applies to each output value before storing it: first the residual addend (rows
/// laid out as y's), then one activation, as the reference kernels compute them.
struct PointwiseEpilogue {
  const float* residual = nullptr;
  enum class Activation { kNone, kRelu, kClip, kHardSwish } activation = Activation::kNone;
  float lo = 0.f, hi = 0.f;  // kClip's bounds
};

/// y[r][o] = act(bias[o] + sum_i x[r * in + i] * w[o][i] + residual[r][o]) for rows r in
/// [0, rows): x rows of `in` values, y rows of `out` values (both dense, channels-last pixels).
void pointwise_rows(const float* x, int64_t rows, const PointwiseWeights& w, float* y,
                    const PointwiseEpilogue& epilogue = {});

/// How many pointwise_rows calls ran (process-wide): lets tests check which path a layer took.
uint64_t pointwise_direct_calls();

}  // namespace parity::runtime::nn
