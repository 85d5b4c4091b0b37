#pragma once
// A direct vector loop (AVX-512 or AVX2, conv_lanes.h) for the stem convolutions of image networks:
// group 1, at most 4 input channels (RGB), a 3x3 kernel, any stride, paddings and output channels,
// no dilation. Channels-last outputs (a convolution or pool reads the stem) hold a few pixels x up
// to 64 (AVX2: 16) output channels in registers and broadcast one input value per tap and pixel,
// reading an NCHW input in place (the taps outside the input are left out of the edge pixels'
// lists). NCHW outputs hold 16-pixel vectors of 8 output channels (AVX2: 8-pixel vectors of 6) and
// broadcast one weight per tap and channel; their inputs are first copied into a zero-padded strip
// per output row, split by stride phase so that the taps of consecutive output pixels are
// consecutive floats (channels-last inputs take the strip too). The activation runs in registers, a
// Swish on each finished row. conv_dnnl.cpp calls it with the output rows split between the
// threads.
//
// Why: oneDNN 2.6's kernel for these layers was 1.2-1.4x ONNX Runtime's time at 1 thread on
// SqueezeNet's 3 -> 64 and the MobileNets' 3 -> 16 / 3 -> 32 stride-2 stems on 224x224 inputs,
// and writing NCHW (the graph's output) doubled its time (3 -> 64: 0.86 ms against 0.39 ms
// writing channels-last). Measured per layer inside the models (1 thread, medians of three):
// MobileNetV2's stem 0.33 -> 0.25 ms, MobileNetV3's 0.25 -> 0.17 ms, EfficientNet-B0's (with its
// Swish) 0.49 -> 0.40 ms, SqueezeNet's 0.50 -> 0.43 ms; as a graph's only layer (NCHW output)
// 3 -> 64: 0.86 -> 0.45 ms, 3 -> 32: 0.35 -> 0.21 ms, 3 -> 16: 0.18 -> 0.12 ms.

#include <cstdint>
#include <vector>

#include "runtime/ops/nn/conv_depthwise_fast.h"
#include "runtime/ops/nn/conv_pointwise_fast.h"

namespace parity::runtime::nn {

/// Whether the loop has a variant for this tier: AVX-512F (16 lanes) or AVX2 + FMA (8 lanes).
bool stem_direct_available(KernelIsa isa);

/// ONNX weights [out, in, kh, kw] in the two orders the loop reads: `packed` as [in * kh * kw]
/// [padded out] (out rounded up to 16, zeros in the padding) for channels-last outputs, `plain`
/// as given ([out][in * kh * kw]) for NCHW outputs; the bias padded (zeros when there is none).
struct StemWeights {
  int64_t in = 0, out = 0, padded = 0, kh = 0, kw = 0;
  std::vector<float> packed, plain, bias;
  KernelIsa isa = KernelIsa::kBaseline;  // the tier stem_rows runs these weights at
  DirectLoopSchedule schedule = DirectLoopSchedule::kTier;
};
StemWeights pack_stem_weights(const float* weights, int64_t out, int64_t in, int64_t kh, int64_t kw,
                              const float* bias, KernelIsa isa);

/// Output rows [row_begin, row_end) of one image, `g` its geometry (as for the depthwise loop).
/// x is [in][in_h][in_w] or, when `x_channels_last`, [in_h][in_w][in]; y likewise [out][out_h]
/// [out_w] or [out_h][out_w][out]. The epilogue's activation applies (its residual must be null);
/// a Swish, when `swish_alpha` is set, runs after it on each finished row.
void stem_rows(const float* x, bool x_channels_last, const StemWeights& w, const DepthwiseGeometry& g,
               int64_t row_begin, int64_t row_end, float* y, bool y_channels_last, const PointwiseEpilogue& epilogue,
               const float* swish_alpha);

/// How many stem_rows calls ran (process-wide): lets tests check which path a layer took.
uint64_t stem_direct_calls();

}  // namespace parity::runtime::nn
