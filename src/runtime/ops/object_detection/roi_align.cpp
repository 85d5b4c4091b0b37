// Spec: https://onnx.ai/onnx/operators/onnx__RoiAlign.html
// RoiAlign (opset 10, 16).
// Sampling and the 'max' reduction follow ONNX Runtime (max of the weighted corner values), which
// the ONNX reference implementation mirrors.
#include <cmath>

#include "runtime/ops/nn/nn_common.h"

namespace parity::runtime::nn {
namespace {

class RoiAlignKernel : public Kernel {
 public:
  explicit RoiAlignKernel(const KernelInit& init)
      : max_mode_(init.attr_string("mode", "avg") == "max"),
        out_h_(init.attr_int("output_height", 1)),
        out_w_(init.attr_int("output_width", 1)),
        sampling_ratio_(init.attr_int("sampling_ratio", 0)),
        spatial_scale_(init.attr_float("spatial_scale", 1.0f)) {
    const std::string mode = init.attr_string("mode", "avg");
    if (mode != "avg" && mode != "max") init.fail("unknown mode '", mode, "'");
    // Opset 10 behaves like 'output_half_pixel'; opset 16 defaults to 'half_pixel'.
    const std::string ctm =
        init.opset() >= 16 ? init.attr_string("coordinate_transformation_mode", "half_pixel") : "output_half_pixel";
    if (ctm != "half_pixel" && ctm != "output_half_pixel") init.fail("unknown coordinate_transformation_mode '", ctm, "'");
    half_pixel_ = ctm == "half_pixel";
    if (out_h_ <= 0 || out_w_ <= 0) init.fail("output_height and output_width must be positive");
    if (sampling_ratio_ < 0) init.fail("sampling_ratio must be non-negative");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& rois_t = ctx.input(1);
    const Tensor& idx_t = ctx.input(2);
    if (x.rank() != 4) ctx.fail("X must be 4-D, got ", shape_to_string(x.shape()));
    if (rois_t.rank() != 2 || rois_t.dim(1) != 4) ctx.fail("rois must be (num_rois, 4), got ", shape_to_string(rois_t.shape()));
    const int64_t num_rois = rois_t.dim(0);
    if (idx_t.numel() != num_rois) ctx.fail("batch_indices has ", idx_t.numel(), " values, expected ", num_rois);
    const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
    const std::vector<double> xv = load_as<double>(x), rois = load_as<double>(rois_t);
    const std::vector<int64_t> batch_idx = read_int64s(idx_t);
    std::vector<double> out(static_cast<size_t>(num_rois * c * out_h_ * out_w_));
    const double offset = half_pixel_ ? 0.5 : 0.0;
    for (int64_t r = 0; r < num_rois; ++r) {
      const int64_t b = batch_idx[r];
      if (b < 0 || b >= n) ctx.fail("batch index ", b, " is out of range [0, ", n, ")");
      const double* roi = rois.data() + r * 4;
      const double x1 = roi[0] * spatial_scale_ - offset, y1 = roi[1] * spatial_scale_ - offset;
      const double x2 = roi[2] * spatial_scale_ - offset, y2 = roi[3] * spatial_scale_ - offset;
      double roi_w = x2 - x1, roi_h = y2 - y1;
      if (!half_pixel_) {
        roi_w = std::max(roi_w, 1.0);
        roi_h = std::max(roi_h, 1.0);
      }
      const double bin_h = roi_h / static_cast<double>(out_h_), bin_w = roi_w / static_cast<double>(out_w_);
      const int64_t grid_h = sampling_ratio_ > 0 ? sampling_ratio_ : static_cast<int64_t>(std::ceil(roi_h / out_h_));
      const int64_t grid_w = sampling_ratio_ > 0 ? sampling_ratio_ : static_cast<int64_t>(std::ceil(roi_w / out_w_));
      const double count = static_cast<double>(std::max<int64_t>(grid_h * grid_w, 1));
      // Bilinear sample positions and weights, shared by every channel.
      struct Sample {
        int64_t o[4];
        double wt[4];
      };
      std::vector<Sample> samples;
      samples.reserve(static_cast<size_t>(out_h_ * out_w_ * grid_h * grid_w));
      for (int64_t ph = 0; ph < out_h_; ++ph)
        for (int64_t pw = 0; pw < out_w_; ++pw)
          for (int64_t iy = 0; iy < grid_h; ++iy)
            for (int64_t ix = 0; ix < grid_w; ++ix) {
              double yy = y1 + ph * bin_h + (iy + 0.5) * bin_h / static_cast<double>(grid_h);
              double xx = x1 + pw * bin_w + (ix + 0.5) * bin_w / static_cast<double>(grid_w);
              Sample s{{0, 0, 0, 0}, {0, 0, 0, 0}};
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
                s = Sample{{y_lo * w + x_lo, y_lo * w + x_hi, y_hi * w + x_lo, y_hi * w + x_hi},
                           {hy * hx, hy * lx, ly * hx, ly * lx}};
              }
              samples.push_back(s);
            }
      const int64_t per_bin = grid_h * grid_w;
      for (int64_t ch = 0; ch < c; ++ch) {
        const double* plane = xv.data() + (b * c + ch) * h * w;
        for (int64_t bin = 0; bin < out_h_ * out_w_; ++bin) {
          double acc = 0;
          bool first = true;
          for (int64_t k = 0; k < per_bin; ++k) {
            const Sample& s = samples[bin * per_bin + k];
            if (max_mode_) {
              const double v = std::max({s.wt[0] * plane[s.o[0]], s.wt[1] * plane[s.o[1]], s.wt[2] * plane[s.o[2]],
                                         s.wt[3] * plane[s.o[3]]});
              acc = first ? v : std::max(acc, v);
              first = false;
            } else {
              acc += s.wt[0] * plane[s.o[0]] + s.wt[1] * plane[s.o[1]] + s.wt[2] * plane[s.o[2]] + s.wt[3] * plane[s.o[3]];
            }
          }
          out[(r * c + ch) * out_h_ * out_w_ + bin] = max_mode_ ? acc : acc / count;
        }
      }
    }
    emit_output(ctx, 0, x.dtype(), Shape{num_rois, c, out_h_, out_w_}, out);
  }

 private:
  bool max_mode_;
  int64_t out_h_, out_w_, sampling_ratio_;
  float spatial_scale_;
  bool half_pixel_ = false;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "RoiAlign", (10, 16), RoiAlignKernel);

}  // namespace parity::runtime::nn
