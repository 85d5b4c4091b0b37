// GridSample (opset 16): https://github.com/onnx/onnx/blob/main/docs/Operators.md#GridSample
// 2-D sampling of NCHW input at normalized grid locations, with PyTorch's grid_sample semantics
// (the test data is produced by torch.nn.functional.grid_sample).
#include <cmath>

#include "runtime/ops/nn/nn_common.h"

namespace parity::runtime::nn {
namespace {

enum class SampleMode { kBilinear, kNearest, kBicubic };
enum class PaddingMode { kZeros, kBorder, kReflection };

double reflect(double x, double twice_low, double twice_high) {
  if (twice_low == twice_high) return 0.0;
  const double lo = twice_low / 2, span = (twice_high - twice_low) / 2;
  x = std::fabs(x - lo);
  const double extra = std::fmod(x, span);
  const int64_t flips = static_cast<int64_t>(std::floor(x / span));
  return flips % 2 == 0 ? extra + lo : span - extra + lo;
}

class GridSampleKernel : public Kernel {
 public:
  explicit GridSampleKernel(const KernelInit& init) : align_corners_(init.attr_int("align_corners", 0) != 0) {
    const std::string mode = init.attr_string("mode", "bilinear");
    if (mode == "bilinear") mode_ = SampleMode::kBilinear;
    else if (mode == "nearest") mode_ = SampleMode::kNearest;
    else if (mode == "bicubic") mode_ = SampleMode::kBicubic;
    else init.fail("unknown mode '", mode, "'");
    const std::string pad = init.attr_string("padding_mode", "zeros");
    if (pad == "zeros") padding_ = PaddingMode::kZeros;
    else if (pad == "border") padding_ = PaddingMode::kBorder;
    else if (pad == "reflection") padding_ = PaddingMode::kReflection;
    else init.fail("unknown padding_mode '", pad, "'");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& grid = ctx.input(1);
    if (x.rank() != 4) ctx.fail("X must be 4-D (N, C, H, W), got ", shape_to_string(x.shape()));
    if (grid.rank() != 4 || grid.dim(3) != 2 || grid.dim(0) != x.dim(0))
      ctx.fail("grid must be (N, H_out, W_out, 2) with N = ", x.dim(0), ", got ", shape_to_string(grid.shape()));
    const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
    const int64_t oh = grid.dim(1), ow = grid.dim(2);
    visit_float_compute(x.dtype(), ctx, [&](auto tag) {
      using A = typename decltype(tag)::type;
      const std::vector<double> xv = load_as<double>(x), gv = load_as<double>(grid);
      std::vector<A> out(static_cast<size_t>(n * c * oh * ow));
      ctx.parallel_for(n * c, [&](int64_t begin, int64_t end) {
        for (int64_t nc = begin; nc < end; ++nc) {
          const int64_t b = nc / c;
          const double* plane = xv.data() + nc * h * w;
          auto pixel = [&](int64_t yy, int64_t xx) -> double {
            return (yy < 0 || yy >= h || xx < 0 || xx >= w) ? 0.0 : plane[yy * w + xx];
          };
          for (int64_t i = 0; i < oh; ++i)
            for (int64_t j = 0; j < ow; ++j) {
              const double* g = gv.data() + ((b * oh + i) * ow + j) * 2;
              out[(nc * oh + i) * ow + j] = static_cast<A>(sample(g[0], g[1], h, w, pixel));
            }
        }
      });
      emit_output(ctx, 0, x.dtype(), Shape{n, c, oh, ow}, out);
    });
  }

 private:
  double unnormalize(double coord, int64_t size) const {
    return align_corners_ ? (coord + 1) / 2 * static_cast<double>(size - 1)
                          : ((coord + 1) * static_cast<double>(size) - 1) / 2;
  }
  /// Applies border clamping or reflection to a (pixel-space) coordinate.
  double apply_padding(double coord, int64_t size) const {
    if (padding_ == PaddingMode::kBorder) return std::clamp(coord, 0.0, static_cast<double>(size - 1));
    if (padding_ == PaddingMode::kReflection) {
      coord = align_corners_ ? reflect(coord, 0, 2.0 * static_cast<double>(size - 1))
                             : reflect(coord, -1, 2.0 * static_cast<double>(size) - 1);
      return std::clamp(coord, 0.0, static_cast<double>(size - 1));
    }
    return coord;
  }

  template <typename Pixel>
  double sample(double gx, double gy, int64_t h, int64_t w, const Pixel& pixel) const {
    if (mode_ == SampleMode::kBicubic) {
      const double ix = unnormalize(gx, w), iy = unnormalize(gy, h);
      const double x0 = std::floor(ix), y0 = std::floor(iy);
      const double tx = ix - x0, ty = iy - y0;
      auto bounded = [&](double yy, double xx) {
        const double px = apply_padding(xx, w), py = apply_padding(yy, h);
        return pixel(static_cast<int64_t>(py), static_cast<int64_t>(px));
      };
      auto coeffs = [](double t) {
        const double a = -0.75;
        auto near = [a](double v) { return ((a + 2) * v - (a + 3)) * v * v + 1; };
        auto far = [a](double v) { return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a; };
        return std::array<double, 4>{far(t + 1), near(t), near(1 - t), far(2 - t)};
      };
      const auto cx = coeffs(tx), cy = coeffs(ty);
      double result = 0;
      for (int r = 0; r < 4; ++r) {
        double row = 0;
        for (int k = 0; k < 4; ++k) row += cx[k] * bounded(y0 - 1 + r, x0 - 1 + k);
        result += cy[r] * row;
      }
      return result;
    }
    const double ix = apply_padding(unnormalize(gx, w), w), iy = apply_padding(unnormalize(gy, h), h);
    if (mode_ == SampleMode::kNearest)
      return pixel(static_cast<int64_t>(std::nearbyint(iy)), static_cast<int64_t>(std::nearbyint(ix)));
    const double x0 = std::floor(ix), y0 = std::floor(iy);
    const double lx = ix - x0, ly = iy - y0;
    const auto xi = static_cast<int64_t>(x0), yi = static_cast<int64_t>(y0);
    return pixel(yi, xi) * (1 - lx) * (1 - ly) + pixel(yi, xi + 1) * lx * (1 - ly) + pixel(yi + 1, xi) * (1 - lx) * ly +
           pixel(yi + 1, xi + 1) * lx * ly;
  }

  bool align_corners_;
  SampleMode mode_ = SampleMode::kBilinear;
  PaddingMode padding_ = PaddingMode::kZeros;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "GridSample", 16, GridSampleKernel);

}  // namespace parity::runtime::nn
