// Spec: https://onnx.ai/onnx/operators/onnx__Resize.html, onnx__Upsample.html
// Resize (opset 10, 11, 13, 18, 19) and Upsample (opset 7, 9). 18 adds axes and
// keep_aspect_ratio_policy, 19 half_pixel_symmetric; 18's antialias widens the linear/cubic filter
// when downscaling.
//
// Every mode is separable, so the resize runs one axis at a time: each pass maps a tensor viewed
// as [outer, in_len, inner] to [outer, out_len, inner] through per-output-index taps (input index
// + weight). Axes whose size and coordinates do not change are skipped.
#include <cmath>

#include "core/allocation_limit.h"
#include "runtime/ops/common/axis.h"
#include "runtime/ops/common/float_index.h"
#include "runtime/ops/nn/nn_common.h"

namespace parity::runtime::nn {
namespace {

enum class ResizeMode { kNearest, kLinear, kCubic };
enum class CoordMode {
  kHalfPixel,
  kHalfPixelSymmetric,  // opset 19
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize
};
/// How opset 18's keep_aspect_ratio_policy turns 'sizes' into one scale for all resized axes.
enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };
enum class NearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

struct ResizeAttrs {
  ResizeMode mode = ResizeMode::kNearest;
  CoordMode coord = CoordMode::kHalfPixel;
  NearestMode nearest = NearestMode::kRoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0.0;
  bool antialias = false;  // opset 18: downscaling filters stretch by 1 / scale
};

/// One pass's taps: for each output index, up to 4 (input index, weight) pairs; `outside`
/// marks outputs that take the extrapolation value.
struct AxisTaps {
  int64_t width = 1;
  std::vector<int64_t> index;  // [out * width + t]
  std::vector<double> weight;
  std::vector<char> outside;
};

std::array<double, 4> cubic_coeffs(double r, double a) {
  auto near = [a](double x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };           // |x| <= 1
  auto far = [a](double x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };      // 1 < |x| < 2
  return {far(r + 1), near(r), near(1 - r), far(2 - r)};
}

/// Antialiased downscaling: the linear (triangle) or cubic filter evaluated at (offset * scale) over
/// every tap it covers, normalized to sum 1. Taps are offsets first_offset .. first_offset+width-1
/// from the sample at or left of the coordinate; `ratio` is the coordinate's distance from it.
struct AntialiasFilter {
  int64_t first_offset = 0, width = 0;
  AntialiasFilter(ResizeMode mode, double scale) {
    const double support = mode == ResizeMode::kCubic ? 2.0 : 1.0;
    first_offset = sample_index(std::floor(-support / scale)) + 1;
    width = 2 - 2 * first_offset;  // offsets symmetric about the coordinate
  }
  double weight(ResizeMode mode, double t, double cubic_a) const {
    t = std::fabs(t);
    if (mode == ResizeMode::kLinear) return std::max(0.0, 1 - t);
    if (t <= 1) return ((cubic_a + 2) * t - (cubic_a + 3)) * t * t + 1;
    if (t < 2) return ((cubic_a * t - 5 * cubic_a) * t + 8 * cubic_a) * t - 4 * cubic_a;
    return 0.0;
  }
};

AxisTaps make_taps(const ResizeAttrs& a, int64_t in, int64_t out, double scale, double roi_start, double roi_end) {
  AxisTaps taps;
  taps.width = a.mode == ResizeMode::kCubic ? 4 : (a.mode == ResizeMode::kLinear ? 2 : 1);
  const bool antialias = a.antialias && a.mode != ResizeMode::kNearest && scale < 1.0;
  const AntialiasFilter filter(a.mode, std::min(scale, 1.0));
  if (antialias) taps.width = filter.width;
  checked_tensor_bytes(DType::kFloat64, Shape{out, taps.width});  // the tap tables below
  taps.index.assign(static_cast<size_t>(out * taps.width), 0);
  taps.weight.assign(static_cast<size_t>(out * taps.width), 0.0);
  taps.outside.assign(static_cast<size_t>(out), 0);
  // The resized length in the coordinate formulas is in * scale, which is fractional when scales
  // (not sizes) are given; the ONNX reference and its test data use it that way.
  const double len = static_cast<double>(in) * scale;
  for (int64_t o = 0; o < out; ++o) {
    const double x = static_cast<double>(o);
    double xo = 0;
    switch (a.coord) {
      case CoordMode::kHalfPixel: xo = (x + 0.5) / scale - 0.5; break;
      case CoordMode::kHalfPixelSymmetric: {
        // Half-pixel about the image centre: the rounding of the output length is spread evenly.
        const double adjustment = static_cast<double>(out) / len;
        const double center = static_cast<double>(in) / 2;
        xo = center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
        break;
      }
      case CoordMode::kPytorchHalfPixel: xo = len > 1 ? (x + 0.5) / scale - 0.5 : 0.0; break;
      case CoordMode::kAlignCorners: xo = len == 1 ? 0.0 : x * static_cast<double>(in - 1) / (len - 1); break;
      case CoordMode::kAsymmetric: xo = x / scale; break;
      case CoordMode::kTfHalfPixelForNn: xo = (x + 0.5) / scale; break;
      case CoordMode::kTfCropAndResize:
        xo = len > 1 ? roi_start * (in - 1) + x * (roi_end - roi_start) * (in - 1) / (len - 1)
                     : 0.5 * (roi_start + roi_end) * (in - 1);
        if (xo < 0 || xo > static_cast<double>(in - 1)) taps.outside[o] = 1;
        break;
    }
    const auto clamp = [in](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
    int64_t* idx = &taps.index[o * taps.width];
    double* w = &taps.weight[o * taps.width];
    if (a.mode == ResizeMode::kNearest) {
      int64_t i = 0;
      const double fl = std::floor(xo);
      switch (a.nearest) {
        case NearestMode::kRoundPreferFloor: i = sample_index(xo - fl == 0.5 ? fl : std::round(xo)); break;
        case NearestMode::kRoundPreferCeil: i = sample_index(xo - fl == 0.5 ? fl + 1 : std::round(xo)); break;
        case NearestMode::kFloor: i = sample_index(fl); break;
        case NearestMode::kCeil: i = sample_index(std::ceil(xo)); break;
        case NearestMode::kSimple: i = sample_index(scale < 1 ? std::ceil(xo) : std::trunc(xo)); break;
      }
      idx[0] = clamp(i);
      w[0] = 1.0;
      continue;
    }
    // Base index: the sample at or left of xo, preferring the left one when xo is integral
    // (ratio in (0, 1]), as the ONNX reference does.
    const int64_t base = sample_index(std::ceil(xo)) - 1;
    const double ratio = xo - static_cast<double>(base);
    if (antialias) {
      double sum = 0;
      for (int64_t t = 0; t < filter.width; ++t) {
        const int64_t offset = filter.first_offset + t;
        const int64_t raw = base + offset;
        idx[t] = clamp(raw);
        w[t] = (a.exclude_outside && (raw < 0 || raw >= in))
                   ? 0.0
                   : filter.weight(a.mode, (static_cast<double>(offset) - ratio) * scale, a.cubic_a);
        sum += w[t];
      }
      if (sum != 0)
        for (int64_t t = 0; t < filter.width; ++t) w[t] /= sum;
      continue;
    }
    if (a.mode == ResizeMode::kLinear) {
      const int64_t raw[2] = {base, base + 1};
      const double c[2] = {1 - ratio, ratio};
      for (int t = 0; t < 2; ++t) {
        idx[t] = clamp(raw[t]);
        w[t] = c[t];
      }
    } else {
      const auto c = cubic_coeffs(ratio, a.cubic_a);
      double sum = 0;
      for (int t = 0; t < 4; ++t) {
        const int64_t raw = base - 1 + t;
        idx[t] = clamp(raw);
        w[t] = (a.exclude_outside && (raw < 0 || raw >= in)) ? 0.0 : c[t];
        sum += w[t];
      }
      if (a.exclude_outside && sum != 0)
        for (int t = 0; t < 4; ++t) w[t] /= sum;
    }
  }
  return taps;
}

/// Resizes `data` (shape `shape`) along `axis` to `out` entries using `taps`.
std::vector<double> resize_axis(const std::vector<double>& data, Shape& shape, int64_t axis, int64_t out,
                                const AxisTaps& taps, double extrapolation, KernelContext& ctx) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (int64_t d = axis + 1; d < static_cast<int64_t>(shape.size()); ++d) inner *= shape[d];
  const int64_t in = shape[axis];
  std::vector<double> result(static_cast<size_t>(outer * out * inner));
  ctx.parallel_for(outer, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const double* src = data.data() + b * in * inner;
      double* dst = result.data() + b * out * inner;
      for (int64_t o = 0; o < out; ++o) {
        double* row = dst + o * inner;
        if (taps.outside[o]) {
          std::fill(row, row + inner, extrapolation);
          continue;
        }
        std::fill(row, row + inner, 0.0);
        for (int64_t t = 0; t < taps.width; ++t) {
          const double w = taps.weight[o * taps.width + t];
          if (w == 0.0) continue;
          const double* s = src + taps.index[o * taps.width + t] * inner;
          for (int64_t i = 0; i < inner; ++i) row[i] += w * s[i];
        }
      }
    }
  });
  shape[axis] = out;
  return result;
}

/// floor(dim * scale): the length of axis `axis` resized by a positive scale from the model.
int64_t resized_length(const KernelContext& ctx, int64_t dim, double scale, int64_t axis) {
  const double length = std::floor(static_cast<double>(dim) * scale);
  if (!fits_int64(length)) ctx.fail("scale ", scale, " makes axis ", axis, " too long");
  return static_cast<int64_t>(length);
}

/// Runs the separable resize given per-axis output sizes and scales.
void run_resize(KernelContext& ctx, const ResizeAttrs& a, const Tensor& x, const std::vector<int64_t>& out_sizes,
                const std::vector<double>& scales, const std::vector<double>& roi) {
  const int64_t rank = x.rank();
  // An empty output has no sample positions; its scale (0 from sizes of 0) must not reach the taps.
  if (std::find(out_sizes.begin(), out_sizes.end(), 0) != out_sizes.end()) {
    ctx.allocate_output(0, x.dtype(), Shape(out_sizes.begin(), out_sizes.end()));
    return;
  }
  std::vector<double> data = load_as<double>(x);
  Shape shape = x.shape();
  for (int64_t d = 0; d < rank; ++d) {
    const double rs = roi.empty() ? 0.0 : roi[d];
    const double re = roi.empty() ? 1.0 : roi[d + rank];
    const bool identity = out_sizes[d] == shape[d] && scales[d] == 1.0 &&
                          (a.coord != CoordMode::kTfCropAndResize || (rs == 0.0 && re == 1.0)) &&
                          a.coord != CoordMode::kTfHalfPixelForNn;
    if (identity) continue;
    if (shape[d] == 0) ctx.fail("cannot resize an empty axis ", d);
    const AxisTaps taps = make_taps(a, shape[d], out_sizes[d], scales[d], rs, re);
    data = resize_axis(data, shape, d, out_sizes[d], taps, a.extrapolation_value, ctx);
  }
  Tensor& y = ctx.allocate_output(0, x.dtype(), shape);
  if (is_floating(x.dtype())) {
    store_to(y, data);
  } else {
    // Integer images: round to nearest and saturate like the float -> int cast of the runtimes.
    visit_numeric_dtype(x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        T* p = y.data<T>();
        for (size_t i = 0; i < data.size(); ++i)
          p[i] = std::isnan(data[i]) ? T{0}  // a NaN extrapolation_value
                                     : static_cast<T>(std::clamp(std::nearbyint(data[i]),
                                                                 static_cast<double>(std::numeric_limits<T>::lowest()),
                                                                 static_cast<double>(std::numeric_limits<T>::max())));
      } else {
        ctx.fail("unsupported dtype ", dtype_name(x.dtype()));
      }
    });
  }
}

ResizeMode parse_mode(const KernelInit& init) {
  const std::string m = init.attr_string("mode", "nearest");
  if (m == "nearest") return ResizeMode::kNearest;
  if (m == "linear" || m == "bilinear" || m == "trilinear") return ResizeMode::kLinear;
  if (m == "cubic") return ResizeMode::kCubic;
  init.fail("unknown mode '", m, "'");
}

class ResizeKernel : public Kernel {
 public:
  explicit ResizeKernel(const KernelInit& init) : opset_(init.opset()) {
    a_.mode = parse_mode(init);
    if (opset_ < 11) {
      // Resize-10 behaves like Upsample: asymmetric coordinates, truncating nearest.
      a_.coord = CoordMode::kAsymmetric;
      a_.nearest = NearestMode::kSimple;
      return;
    }
    const std::string c = init.attr_string("coordinate_transformation_mode", "half_pixel");
    if (c == "half_pixel") a_.coord = CoordMode::kHalfPixel;
    else if (c == "half_pixel_symmetric") a_.coord = CoordMode::kHalfPixelSymmetric;
    else if (c == "pytorch_half_pixel") a_.coord = CoordMode::kPytorchHalfPixel;
    else if (c == "align_corners") a_.coord = CoordMode::kAlignCorners;
    else if (c == "asymmetric") a_.coord = CoordMode::kAsymmetric;
    else if (c == "tf_half_pixel_for_nn") a_.coord = CoordMode::kTfHalfPixelForNn;
    else if (c == "tf_crop_and_resize") a_.coord = CoordMode::kTfCropAndResize;
    else init.fail("unknown coordinate_transformation_mode '", c, "'");
    const std::string n = init.attr_string("nearest_mode", "round_prefer_floor");
    if (n == "round_prefer_floor") a_.nearest = NearestMode::kRoundPreferFloor;
    else if (n == "round_prefer_ceil") a_.nearest = NearestMode::kRoundPreferCeil;
    else if (n == "floor") a_.nearest = NearestMode::kFloor;
    else if (n == "ceil") a_.nearest = NearestMode::kCeil;
    else init.fail("unknown nearest_mode '", n, "'");
    a_.cubic_a = init.attr_float("cubic_coeff_a", -0.75f);
    a_.exclude_outside = init.attr_int("exclude_outside", 0) != 0;
    a_.extrapolation_value = init.attr_float("extrapolation_value", 0.0f);
    axes_ = init.attr_ints("axes", {});
    const std::string policy = init.attr_string("keep_aspect_ratio_policy", "stretch");
    if (policy == "stretch") policy_ = AspectPolicy::kStretch;
    else if (policy == "not_larger") policy_ = AspectPolicy::kNotLarger;
    else if (policy == "not_smaller") policy_ = AspectPolicy::kNotSmaller;
    else init.fail("unknown keep_aspect_ratio_policy '", policy, "'");
    a_.antialias = init.attr_int("antialias", 0) != 0;
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    std::vector<double> roi, scales;
    std::vector<int64_t> sizes;
    if (opset_ < 11) {
      scales = read_doubles(ctx.input(1));
    } else {
      if (ctx.has_input(1)) roi = read_doubles(ctx.input(1));
      if (ctx.has_input(2)) scales = read_doubles(ctx.input(2));
      if (ctx.has_input(3)) sizes = read_int64s(ctx.input(3));
    }
    if (!scales.empty() && !sizes.empty()) ctx.fail("only one of 'scales' and 'sizes' may be given");
    if (scales.empty() && sizes.empty()) ctx.fail("one of 'scales' and 'sizes' is required");
    std::vector<int64_t> resized_axes;  // the axes 'sizes' and 'scales' name
    if (!axes_.empty()) resized_axes = expand_to_rank(ctx, rank, roi, scales, sizes);
    else
      for (int64_t d = 0; d < rank; ++d) resized_axes.push_back(d);
    if (a_.coord == CoordMode::kTfCropAndResize && static_cast<int64_t>(roi.size()) != 2 * rank)
      ctx.fail("roi must have ", 2 * rank, " values for tf_crop_and_resize, got ", roi.size());
    if (a_.coord != CoordMode::kTfCropAndResize) roi.clear();
    std::vector<int64_t> out(static_cast<size_t>(rank));
    if (!sizes.empty()) {
      if (static_cast<int64_t>(sizes.size()) != rank) ctx.fail("sizes has ", sizes.size(), " values, rank is ", rank);
      scales.resize(static_cast<size_t>(rank));
      for (int64_t d = 0; d < rank; ++d) {
        if (sizes[d] < 0) ctx.fail("sizes must be non-negative");
        out[d] = sizes[d];
        scales[d] = x.dim(d) == 0 ? 1.0 : static_cast<double>(sizes[d]) / static_cast<double>(x.dim(d));
      }
      if (policy_ != AspectPolicy::kStretch) keep_aspect_ratio(ctx, x, resized_axes, out, scales);
    } else {
      if (static_cast<int64_t>(scales.size()) != rank) ctx.fail("scales has ", scales.size(), " values, rank is ", rank);
      for (int64_t d = 0; d < rank; ++d) {
        if (!(scales[d] > 0)) ctx.fail("scales must be positive, got ", scales[d]);
        out[d] = resized_length(ctx, x.dim(d), scales[d], d);
      }
    }
    run_resize(ctx, a_, x, out, scales, roi);
  }

 private:
  /// Opset 18's 'axes': roi, scales and sizes name only those axes; the others keep their size
  /// (scale 1, roi [0, 1]).
  /// Returns the normalized axes.
  std::vector<int64_t> expand_to_rank(const KernelContext& ctx, int64_t rank, std::vector<double>& roi,
                                      std::vector<double>& scales, std::vector<int64_t>& sizes) const {
    const std::vector<int64_t> axes = ops::normalize_axes(axes_, rank, ctx);
    const size_t n = axes.size();
    if (!roi.empty() && roi.size() != 2 * n) ctx.fail("roi has ", roi.size(), " values for ", n, " axes");
    if (!scales.empty() && scales.size() != n) ctx.fail("scales has ", scales.size(), " values for ", n, " axes");
    if (!sizes.empty() && sizes.size() != n) ctx.fail("sizes has ", sizes.size(), " values for ", n, " axes");
    std::vector<double> full_roi(static_cast<size_t>(2 * rank)), full_scales(static_cast<size_t>(rank), 1.0);
    std::vector<int64_t> full_sizes(static_cast<size_t>(rank), -1);  // -1: the input's own size
    for (int64_t d = 0; d < rank; ++d) full_roi[d + rank] = 1.0;
    for (size_t k = 0; k < n; ++k) {
      if (!roi.empty()) full_roi[axes[k]] = roi[k], full_roi[axes[k] + rank] = roi[k + n];
      if (!scales.empty()) full_scales[axes[k]] = scales[k];
      if (!sizes.empty()) full_sizes[axes[k]] = sizes[k];
    }
    if (!roi.empty()) roi = full_roi;
    if (!scales.empty()) scales = full_scales;
    if (!sizes.empty()) {
      for (int64_t d = 0; d < rank; ++d)
        if (full_sizes[d] < 0) full_sizes[d] = ctx.input(0).dim(d);
      sizes = full_sizes;
    }
    return axes;
  }

  /// not_larger / not_smaller: one scale (the smallest / largest of sizes[d] / in[d] over the
  /// resized axes) for every resized axis, the sizes rounded from it.
  void keep_aspect_ratio(const KernelContext& ctx, const Tensor& x, const std::vector<int64_t>& axes,
                         std::vector<int64_t>& out, std::vector<double>& scales) const {
    double scale = policy_ == AspectPolicy::kNotLarger ? std::numeric_limits<double>::infinity() : 0.0;
    for (int64_t d : axes)
      scale = policy_ == AspectPolicy::kNotLarger ? std::min(scale, scales[d]) : std::max(scale, scales[d]);
    for (int64_t d : axes) {
      scales[d] = scale;
      const double length = std::nearbyint(scale * static_cast<double>(x.dim(d)));
      if (!fits_int64(length)) ctx.fail("keeping the aspect ratio makes axis ", d, " too long");
      out[d] = static_cast<int64_t>(length);
    }
  }

  int opset_;
  ResizeAttrs a_;
  std::vector<int64_t> axes_;
  AspectPolicy policy_ = AspectPolicy::kStretch;
};

/// Upsample-1 (height_scale/width_scale), Upsample-7 (scales attribute), Upsample-9 (scales input).
class UpsampleKernel : public Kernel {
 public:
  explicit UpsampleKernel(const KernelInit& init) : opset_(init.opset()) {
    a_.mode = parse_mode(init);
    a_.coord = CoordMode::kAsymmetric;
    a_.nearest = NearestMode::kSimple;
    if (opset_ < 7) {
      // Upsample-1: NCHW only, with height_scale / width_scale attributes.
      scales_ = {1.0f, 1.0f, init.attr_float("height_scale"), init.attr_float("width_scale")};
    } else if (opset_ < 9) {
      scales_ = init.attr_floats("scales");
    }
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    std::vector<double> scales(scales_.begin(), scales_.end());
    if (opset_ >= 9) scales = read_doubles(ctx.input(1));
    if (static_cast<int64_t>(scales.size()) != x.rank()) ctx.fail("scales has ", scales.size(), " values");
    std::vector<int64_t> out(scales.size());
    for (size_t d = 0; d < scales.size(); ++d) {
      if (!(scales[d] > 0)) ctx.fail("scales must be positive");
      out[d] = resized_length(ctx, x.dim(d), scales[d], static_cast<int64_t>(d));
    }
    run_resize(ctx, a_, x, out, scales, {});
  }

 private:
  int opset_;
  ResizeAttrs a_;
  std::vector<float> scales_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Resize", (10, 11, 13, 18, 19), ResizeKernel);
PARITY_REGISTER_KERNEL("", "Upsample", (1, 7, 9), UpsampleKernel);

}  // namespace parity::runtime::nn
