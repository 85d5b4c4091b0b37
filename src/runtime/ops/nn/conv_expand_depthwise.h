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

/// How many expand_depthwise_rows calls ran (process-wide): lets tests check which path ran.
uint64_t expand_depthwise_calls();

}  // namespace parity::runtime::nn
