#pragma once
// The activation the direct convolution loops (pointwise, depthwise, stem) apply to their outputs
// one value at a time in their portable loops (conv_lanes_epilogue.inc applies it to a vector).

#include <algorithm>

#include "runtime/ops/nn/conv_pointwise_fast.h"

namespace parity::runtime::nn {

inline float activate(float v, const PointwiseEpilogue& e) {
  using Activation = PointwiseEpilogue::Activation;
  switch (e.activation) {
    case Activation::kRelu: return v > 0.f ? v : 0.f;
    case Activation::kClip: return std::min(std::max(v, e.lo), e.hi);
    case Activation::kHardSwish: return v * std::max(0.f, std::min(1.f, v / 6.f + 0.5f));
    default: return v;
  }
}

}  // namespace parity::runtime::nn
