// The bilinear sample points of one RoiAlign region, shared by the reference kernel
// (roi_align.cpp) and the optimized one (roi_align_fast.cpp) so that both tiers sample at
// identical coordinates. Sampling follows ONNX Runtime, which the ONNX reference mirrors.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/allocation_limit.h"

namespace parity::runtime::nn {

/// RoiAlign's attributes as the sampling needs them.
struct RoiAlignGeometry {
  int64_t out_h = 1, out_w = 1, sampling_ratio = 0;
  double spatial_scale = 1.0;
  bool half_pixel = false;
};

/// One sample point: four corner offsets into an h x w plane and their weights (all zero for a
/// point outside the plane, NaN included).
struct RoiSample {
  int64_t offset[4];
  double weight[4];
};

/// The samples of one region, `per_bin` consecutive ones per output bin (bins in row-major order),
/// for a plane of h x w; `roi` is (x1, y1, x2, y2) in the input's coordinates before scaling.
struct RoiSamples {
  std::vector<RoiSample> samples;
  int64_t per_bin = 1;
  double count = 1;  // what 'avg' divides each bin's sum by
};

/// Sample points per bin along one axis: `sampling_ratio`, or with 0 the adaptive ceil(extent /
/// bins), none for an inverted region (as ONNX Runtime's loops run none; its bins are 0); nullopt
/// when that is no usable count (a NaN, infinite or huge region).
inline std::optional<int64_t> roi_grid_size(int64_t sampling_ratio, double extent, int64_t bins) {
  if (sampling_ratio > 0) return sampling_ratio;
  const double adaptive = std::ceil(extent / static_cast<double>(bins));
  if (!(adaptive > -0x1p31 && adaptive <= 0x1p31)) return std::nullopt;  // NaN too
  return std::max<int64_t>(static_cast<int64_t>(adaptive), 0);
}

/// The region's samples; nullopt when its adaptive grid is no usable count. A grid whose samples
/// would exceed the tensor size cap throws the cap's one-line error.
inline std::optional<RoiSamples> roi_align_samples(const RoiAlignGeometry& g, const double* roi, int64_t h,
                                                   int64_t w) {
  const double offset = g.half_pixel ? 0.5 : 0.0;
  const double x1 = roi[0] * g.spatial_scale - offset, y1 = roi[1] * g.spatial_scale - offset;
  const double x2 = roi[2] * g.spatial_scale - offset, y2 = roi[3] * g.spatial_scale - offset;
  double roi_w = x2 - x1, roi_h = y2 - y1;
  if (!g.half_pixel) {
    roi_w = std::max(roi_w, 1.0);
    roi_h = std::max(roi_h, 1.0);
  }
  const double bin_h = roi_h / static_cast<double>(g.out_h), bin_w = roi_w / static_cast<double>(g.out_w);
  const std::optional<int64_t> grid_h_or = roi_grid_size(g.sampling_ratio, roi_h, g.out_h);
  const std::optional<int64_t> grid_w_or = roi_grid_size(g.sampling_ratio, roi_w, g.out_w);
  if (!grid_h_or || !grid_w_or) return std::nullopt;
  const int64_t grid_h = *grid_h_or, grid_w = *grid_w_or;
  // Each sample is 8 values of 8 bytes; checked like a tensor of them.
  checked_tensor_bytes(DType::kFloat64, Shape{g.out_h, g.out_w, grid_h, grid_w, 8});
  RoiSamples result;
  result.per_bin = grid_h * grid_w;
  result.count = static_cast<double>(std::max<int64_t>(result.per_bin, 1));
  result.samples.reserve(static_cast<size_t>(g.out_h * g.out_w * result.per_bin));
  for (int64_t ph = 0; ph < g.out_h; ++ph)
    for (int64_t pw = 0; pw < g.out_w; ++pw)
      for (int64_t iy = 0; iy < grid_h; ++iy)
        for (int64_t ix = 0; ix < grid_w; ++ix) {
          double yy = y1 + ph * bin_h + (iy + 0.5) * bin_h / static_cast<double>(grid_h);
          double xx = x1 + pw * bin_w + (ix + 0.5) * bin_w / static_cast<double>(grid_w);
          RoiSample s{{0, 0, 0, 0}, {0, 0, 0, 0}};
          if (yy >= -1.0 && yy <= h && xx >= -1.0 && xx <= w) {  // NaN is outside too
            yy = std::max(yy, 0.0);
            xx = std::max(xx, 0.0);
            int64_t y_lo = static_cast<int64_t>(yy), x_lo = static_cast<int64_t>(xx), y_hi, x_hi;
            if (y_lo >= h - 1) {
              y_hi = y_lo = h - 1;
              yy = static_cast<double>(y_lo);
            } else {
              y_hi = y_lo + 1;
            }
            if (x_lo >= w - 1) {
              x_hi = x_lo = w - 1;
              xx = static_cast<double>(x_lo);
            } else {
              x_hi = x_lo + 1;
            }
            const double ly = yy - y_lo, lx = xx - x_lo, hy = 1 - ly, hx = 1 - lx;
            s = RoiSample{{y_lo * w + x_lo, y_lo * w + x_hi, y_hi * w + x_lo, y_hi * w + x_hi},
                          {hy * hx, hy * lx, ly * hx, ly * lx}};
          }
          result.samples.push_back(s);
        }
  return result;
}

}  // namespace parity::runtime::nn
