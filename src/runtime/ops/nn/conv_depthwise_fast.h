#pragma once
// A direct vector loop (AVX-512 or AVX2, conv_lanes.h) for depthwise 2-D convolutions (one input
// channel per group, any kernel size, strides and paddings, no dilation) between channels-last
// maps: each output pixel's channels are vectors of 16 (8 on AVX2), so every tap is one
// multiply-add of an input vector by the tap's weight vector, and up to 8 output pixels share each
// weight load. conv_dnnl.cpp calls it for 3x3 kernels, with the activation applied in registers (or
// a Swish on each output row while it is in L1).
//
// Why: oneDNN 2.6's depthwise kernel (brdgmm) plus, for EfficientNet, the separate Swish pass over
// its output: measured per layer at 1 thread, MobileNetV2's 3x3 layers took 1.85 ms with oneDNN
// and 1.70 ms here, EfficientNet-B0's 32-channel 3x3 on 112x112 with its Swish 0.46 ms and
// 0.39 ms. On 5x5 kernels oneDNN stayed faster, so those keep it.

#include <cstdint>
#include <vector>

#include "runtime/ops/nn/conv_pointwise_fast.h"

namespace parity::runtime::nn {

/// Whether the loop has a variant for this tier: AVX-512F (16 lanes) or AVX2 + FMA (8 lanes).
bool depthwise_direct_available(KernelIsa isa);

/// ONNX depthwise weights [C, 1, kh, kw] repacked as [kh * kw][padded C] (C rounded up to 16,
/// zeros in the padding), with the bias padded the same way (zeros when there is none).
struct DepthwiseWeights {
  int64_t channels = 0, padded = 0, kh = 0, kw = 0;
  std::vector<float> packed, bias;
  KernelIsa isa = KernelIsa::kBaseline;  // the tier the row loops run these weights at
  DirectLoopSchedule schedule = DirectLoopSchedule::kTier;
};
DepthwiseWeights pack_depthwise_weights(const float* weights, int64_t channels, int64_t kh, int64_t kw,
                                        const float* bias, KernelIsa isa);

/// The geometry of one image: input and output sizes, strides, top / left paddings (the bottom
/// and right ones follow from the sizes).
struct DepthwiseGeometry {
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0, stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0;
};

/// Output rows [row_begin, row_end) of one image: x is [in_h][in_w][C], y is [out_h][out_w][C].
/// The epilogue's activation applies (its residual must be null); a Swish, when `swish_alpha` is
/// set, runs after it on each finished row.
void depthwise_rows(const float* x, const DepthwiseWeights& w, const DepthwiseGeometry& g, int64_t row_begin,
                    int64_t row_end, float* y, const PointwiseEpilogue& epilogue, const float* swish_alpha);

/// Output row `oy` of one image from input rows held anywhere (a ring of rows computed just
/// before, see conv_expand_depthwise.h): rows[ky] is input row oy * stride_h - pad_top + ky
/// ([in_w][C]; null where that row lies outside the input, never read). y_row is [out_w][C].
void depthwise_row_from(const float* const* rows, const DepthwiseWeights& w, const DepthwiseGeometry& g, int64_t oy,
                        float* y_row, const PointwiseEpilogue& epilogue, const float* swish_alpha);

/// How many depthwise_rows calls ran (process-wide): lets tests check which path a layer took.
uint64_t depthwise_direct_calls();

}  // namespace parity::runtime::nn
