// What RoiAlign's reference kernel (roi_align.cpp) and optimized kernel (roi_align_fast.cpp)
// share: attribute parsing, input checks and the sample points, so both tiers fail with the same
// messages and sample at identical coordinates.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/kernel.h"
#include "runtime/ops/object_detection/roi_align_samples.h"

namespace parity::runtime::nn {

/// The node's attributes, checked (KernelInit::fail on an unknown mode or a non-positive size).
struct RoiAlignAttributes {
  explicit RoiAlignAttributes(const KernelInit& init);
  RoiAlignGeometry geometry;
  bool max_mode = false;
};

/// X's dims, the region count and the regions' batch indices.
struct RoiAlignShape {
  int64_t n = 0, c = 0, h = 0, w = 0, num_rois = 0;
  std::vector<int64_t> batch_indices;
};

/// Checks X (4-D), rois ([num_rois, 4]), batch_indices (one in [0, N) per region) and the output's
/// size; fails the node with one line otherwise.
RoiAlignShape check_roi_align_inputs(KernelContext& ctx, const RoiAlignGeometry& geometry);

/// roi_align_samples for region `index`, failing the node when its adaptive grid is unusable.
RoiSamples sample_roi_or_fail(KernelContext& ctx, const RoiAlignGeometry& geometry, const double* roi, int64_t index,
                              int64_t h, int64_t w);

}  // namespace parity::runtime::nn
