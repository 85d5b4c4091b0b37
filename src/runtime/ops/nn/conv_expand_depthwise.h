#pragma once
// A 1x1 "expand" convolution and the depthwise convolution reading its output, computed row by
// row: each expanded row goes into a ring of a few rows and the depthwise loop reads them from
// there, so the expanded map is never written out whole. conv_dnnl.cpp runs it for a 1x1
// convolution that absorbed a depthwise Conv as a fused tail (both channels-last).
//
// Why: the inverted-residual blocks of the mobile networks expand 16-24 channels to 64-144 on
// 112x112 and 56x56 maps; written out whole, the expanded map (1-5 MB) leaves L2 and the
// depthwise layer reads it back from L3. MobileNetV3's 16 -> 64 expand took 0.36 ms (ORT 0.23 ms)
// for 0.15 ms of multiply-adds.

#include <cstdint>
#include <optional>

#include "runtime/ops/nn/conv_depthwise_fast.h"
#include "runtime/ops/nn/conv_pointwise_fast.h"

namespace parity::runtime::nn {

/// What a stage applies to each finished row: an activation in registers, then a Swish when
/// `swish_alpha` is set.
struct RowFinish {
  PointwiseEpilogue activation;  // its residual must be null
  const float* swish_alpha = nullptr;
};

/// Floats of scratch expand_depthwise_rows needs: a ring of kh expanded rows.
int64_t expand_depthwise_scratch(const DepthwiseWeights& depthwise, const DepthwiseGeometry& g);

/// Depthwise output rows [row_begin, row_end) of one image: x is [in_h][in_w][expand.in]
/// (channels-last), the expanded map [in_h][in_w][expand.out] exists only as rows in `scratch`
/// (expand_depthwise_scratch floats), y is [out_h][out_w][expand.out]. g is the depthwise
/// layer's geometry (its input is the expanded map).
void expand_depthwise_rows(const float* x, const PointwiseWeights& expand, const RowFinish& expand_finish,
                           const DepthwiseWeights& depthwise, const DepthwiseGeometry& g, int64_t row_begin,
                           int64_t row_end, float* y, const RowFinish& depthwise_finish, float* scratch);

/// Expanded-map bytes (one image) from which the ring pays: this core's L2 size (1 MiB where the
/// system does not say). A smaller map stays in L2 between the two passes, which then cost no
/// more than the ring (measured on a 2 MB L2: MobileNetV2's 144-channel 56x56 blocks, 1.8 MB,
/// 0.45 ms apart and 0.48 fused); a larger one goes out to L3 and back (MobileNetV2's 16 -> 96
/// -> stride-2 block on 112x112, 4.8 MB: 0.99 ms apart, 0.60 fused; EfficientNet-B0's with Swish
/// 1.58 -> 1.15 ms).
int64_t expand_depthwise_ring_bytes();

/// Replaces expand_depthwise_ring_bytes() within this process (nullopt restores it): tests run
/// both ways on any machine.
void set_expand_depthwise_ring_bytes_for_testing(std::optional<int64_t> bytes);

/// How many expand_depthwise_rows calls ran (process-wide): lets tests check which path ran.
uint64_t expand_depthwise_calls();

}  // namespace parity::runtime::nn
