// Spec: https://onnx.ai/onnx/operators/onnx__RoiAlign.html
// RoiAlign (opset 10, 16).
// Sampling and the 'max' reduction follow ONNX Runtime (max of the weighted corner values), which
// the ONNX reference implementation mirrors.
#include "runtime/ops/object_detection/roi_align.h"

#include <algorithm>

#include "runtime/ops/nn/nn_common.h"

namespace parity::runtime::nn {

RoiAlignAttributes::RoiAlignAttributes(const KernelInit& init) {
  const std::string mode = init.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") init.fail("unknown mode '", mode, "'");
  max_mode = mode == "max";
  geometry.out_h = init.attr_int("output_height", 1);
  geometry.out_w = init.attr_int("output_width", 1);
  geometry.sampling_ratio = init.attr_int("sampling_ratio", 0);
  geometry.spatial_scale = init.attr_float("spatial_scale", 1.0f);
  // Opset 10 behaves like 'output_half_pixel'; opset 16 defaults to 'half_pixel'.
  const std::string ctm =
      init.opset() >= 16 ? init.attr_string("coordinate_transformation_mode", "half_pixel") : "output_half_pixel";
  if (ctm != "half_pixel" && ctm != "output_half_pixel") init.fail("unknown coordinate_transformation_mode '", ctm, "'");
  geometry.half_pixel = ctm == "half_pixel";
  if (geometry.out_h <= 0 || geometry.out_w <= 0) init.fail("output_height and output_width must be positive");
  if (geometry.sampling_ratio < 0) init.fail("sampling_ratio must be non-negative");
}

RoiAlignShape check_roi_align_inputs(KernelContext& ctx, const RoiAlignGeometry& geometry) {
  const Tensor& x = ctx.input(0);
  const Tensor& rois = ctx.input(1);
  const Tensor& batch_indices = ctx.input(2);
  if (x.rank() != 4) ctx.fail("X must be 4-D, got ", shape_to_string(x.shape()));
  if (rois.rank() != 2 || rois.dim(1) != 4) ctx.fail("rois must be (num_rois, 4), got ", shape_to_string(rois.shape()));
  const int64_t num_rois = rois.dim(0);
  if (batch_indices.numel() != num_rois)
    ctx.fail("batch_indices has ", batch_indices.numel(), " values, expected ", num_rois);
  RoiAlignShape shape{x.dim(0), x.dim(1), x.dim(2), x.dim(3), num_rois, read_int64s(batch_indices)};
  for (int64_t b : shape.batch_indices)
    if (b < 0 || b >= shape.n) ctx.fail("batch index ", b, " is out of range [0, ", shape.n, ")");
  checked_tensor_bytes(x.dtype(), Shape{num_rois, shape.c, geometry.out_h, geometry.out_w});
  return shape;
}

RoiSamples sample_roi_or_fail(KernelContext& ctx, const RoiAlignGeometry& geometry, const double* roi, int64_t index,
                              int64_t h, int64_t w) {
  std::optional<RoiSamples> sampled = roi_align_samples(geometry, roi, h, w);
  if (!sampled)
    ctx.fail("roi ", index, " (", roi[0], ", ", roi[1], ", ", roi[2], ", ", roi[3],
             ") has no usable sampling grid: with sampling_ratio 0 its size over the output size must be a "
             "finite count");
  return std::move(*sampled);
}

namespace {

class RoiAlignKernel : public Kernel {
 public:
  explicit RoiAlignKernel(const KernelInit& init) : attributes_(init) {}

  void compute(KernelContext& ctx) const override {
    const RoiAlignGeometry& g = attributes_.geometry;
    const RoiAlignShape shape = check_roi_align_inputs(ctx, g);
    const Tensor& x = ctx.input(0);
    const int64_t c = shape.c, h = shape.h, w = shape.w, bins = g.out_h * g.out_w;
    const std::vector<double> xv = load_as<double>(x), rois = load_as<double>(ctx.input(1));
    std::vector<double> out(static_cast<size_t>(shape.num_rois * c * bins));
    // An empty plane has nothing to sample: every bin stays 0.
    if (h > 0 && w > 0)
      for (int64_t r = 0; r < shape.num_rois; ++r) {
        const RoiSamples sampled = sample_roi_or_fail(ctx, g, rois.data() + r * 4, r, h, w);
        for (int64_t ch = 0; ch < c; ++ch) {
          const double* plane = xv.data() + (shape.batch_indices[r] * c + ch) * h * w;
          for (int64_t bin = 0; bin < bins; ++bin)
            out[(r * c + ch) * bins + bin] = pool_bin(plane, sampled, bin);
        }
      }
    emit_output(ctx, 0, x.dtype(), Shape{shape.num_rois, c, g.out_h, g.out_w}, out);
  }

 private:
  /// One output value: the average of the bin's samples, or the largest weighted corner value.
  double pool_bin(const double* plane, const RoiSamples& sampled, int64_t bin) const {
    double acc = 0;
    bool first = true;
    for (int64_t k = 0; k < sampled.per_bin; ++k) {
      const RoiSample& s = sampled.samples[static_cast<size_t>(bin * sampled.per_bin + k)];
      if (attributes_.max_mode) {
        const double v = std::max({s.weight[0] * plane[s.offset[0]], s.weight[1] * plane[s.offset[1]],
                                   s.weight[2] * plane[s.offset[2]], s.weight[3] * plane[s.offset[3]]});
        acc = first ? v : std::max(acc, v);
        first = false;
      } else {
        acc += s.weight[0] * plane[s.offset[0]] + s.weight[1] * plane[s.offset[1]] + s.weight[2] * plane[s.offset[2]] +
               s.weight[3] * plane[s.offset[3]];
      }
    }
    return attributes_.max_mode ? acc : acc / sampled.count;
  }

  RoiAlignAttributes attributes_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "RoiAlign", (10, 16), RoiAlignKernel);

}  // namespace parity::runtime::nn
