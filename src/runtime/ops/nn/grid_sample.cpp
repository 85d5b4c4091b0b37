// Spec: https://onnx.ai/onnx/operators/onnx__GridSample.html, onnx__AffineGrid.html
// GridSample (opsets 16 and 20): sampling of NCHW input (and, since opset 20, NCDHW with linear or
// nearest modes) at normalized grid locations, with PyTorch's grid_sample semantics (the test data
// is produced by torch.nn.functional.grid_sample). Opset 20 renamed the modes bilinear/bicubic to
// linear/cubic. AffineGrid (opset 20) builds such grids.
#include <cmath>

#include "runtime/ops/common/float_index.h"
#include "runtime/ops/nn/nn_common.h"

namespace parity::runtime::nn {
namespace {

enum class SampleMode { kBilinear, kNearest, kBicubic };
enum class PaddingMode { kZeros, kBorder, kReflection };

double reflect(double x, double twice_low, double twice_high) {
  if (twice_low == twice_high) return 0.0;
  if (!std::isfinite(x)) return x;  // sample_index puts it outside the input
  const double lo = twice_low / 2, span = (twice_high - twice_low) / 2;
  x = std::fabs(x - lo);
  const double extra = std::fmod(x, span);
  const int64_t flips = static_cast<int64_t>(std::fmod(std::floor(x / span), 2.0));
  return flips == 0 ? extra + lo : span - extra + lo;
}

class GridSampleKernel : public Kernel {
 public:
  explicit GridSampleKernel(const KernelInit& init) : align_corners_(init.attr_int("align_corners", 0) != 0) {
    const std::string mode = init.attr_string("mode", "bilinear");
    if (mode == "bilinear" || mode == "linear") mode_ = SampleMode::kBilinear;
    else if (mode == "nearest") mode_ = SampleMode::kNearest;
    else if (mode == "bicubic" || mode == "cubic") mode_ = SampleMode::kBicubic;
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
    if (x.rank() == 5) return compute_volumetric(ctx);
    if (x.rank() != 4) ctx.fail("X must be 4-D (N, C, H, W) or 5-D (N, C, D, H, W), got ", shape_to_string(x.shape()));
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
  /// 5-D input: grid (N, D_out, H_out, W_out, 3) holds (x, y, z); trilinear or nearest.
  void compute_volumetric(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const Tensor& grid = ctx.input(1);
    if (mode_ == SampleMode::kBicubic) ctx.fail("cubic mode supports only 4-D input");
    if (grid.rank() != 5 || grid.dim(4) != 3 || grid.dim(0) != x.dim(0))
      ctx.fail("grid must be (N, D_out, H_out, W_out, 3) with N = ", x.dim(0), ", got ", shape_to_string(grid.shape()));
    const int64_t n = x.dim(0), c = x.dim(1), d = x.dim(2), h = x.dim(3), w = x.dim(4);
    const int64_t od = grid.dim(1), oh = grid.dim(2), ow = grid.dim(3);
    const int64_t points = od * oh * ow;
    visit_float_compute(x.dtype(), ctx, [&](auto tag) {
      using A = typename decltype(tag)::type;
      const std::vector<double> xv = load_as<double>(x), gv = load_as<double>(grid);
      std::vector<A> out(static_cast<size_t>(n * c * points));
      ctx.parallel_for(n * c, [&](int64_t begin, int64_t end) {
        for (int64_t nc = begin; nc < end; ++nc) {
          const double* volume = xv.data() + nc * d * h * w;
          auto voxel = [&](int64_t zz, int64_t yy, int64_t xx) -> double {
            return (zz < 0 || zz >= d || yy < 0 || yy >= h || xx < 0 || xx >= w) ? 0.0 : volume[(zz * h + yy) * w + xx];
          };
          for (int64_t p = 0; p < points; ++p) {
            const double* g = gv.data() + ((nc / c) * points + p) * 3;
            const double ix = apply_padding(unnormalize(g[0], w), w), iy = apply_padding(unnormalize(g[1], h), h),
                         iz = apply_padding(unnormalize(g[2], d), d);
            double v = 0;
            if (mode_ == SampleMode::kNearest) {
              v = voxel(sample_index(std::nearbyint(iz)), sample_index(std::nearbyint(iy)),
                        sample_index(std::nearbyint(ix)));
            } else {
              const double x0 = std::floor(ix), y0 = std::floor(iy), z0 = std::floor(iz);
              const double t[3] = {ix - x0, iy - y0, iz - z0};
              for (int corner = 0; corner < 8; ++corner) {
                const int dx = corner & 1, dy = (corner >> 1) & 1, dz = corner >> 2;
                const double weight = (dx ? t[0] : 1 - t[0]) * (dy ? t[1] : 1 - t[1]) * (dz ? t[2] : 1 - t[2]);
                v += weight * voxel(sample_index(z0) + dz, sample_index(y0) + dy, sample_index(x0) + dx);
              }
            }
            out[nc * points + p] = static_cast<A>(v);
          }
        }
      });
      emit_output(ctx, 0, x.dtype(), Shape{n, c, od, oh, ow}, out);
    });
  }

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
        return pixel(sample_index(py), sample_index(px));
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
      return pixel(sample_index(std::nearbyint(iy)), sample_index(std::nearbyint(ix)));
    const double x0 = std::floor(ix), y0 = std::floor(iy);
    const double lx = ix - x0, ly = iy - y0;
    const int64_t xi = sample_index(x0), yi = sample_index(y0);
    return pixel(yi, xi) * (1 - lx) * (1 - ly) + pixel(yi, xi + 1) * lx * (1 - ly) + pixel(yi + 1, xi) * (1 - lx) * ly +
           pixel(yi + 1, xi + 1) * lx * ly;
  }

  bool align_corners_;
  SampleMode mode_ = SampleMode::kBilinear;
  PaddingMode padding_ = PaddingMode::kZeros;
};

/// Normalized coordinate of position i of n along one axis: the centres of n cells spanning
/// [-1, 1], or with align_corners the first and last cells' centres at -1 and 1.
double grid_coordinate(int64_t i, int64_t n, bool align_corners) {
  const double v = n == 1 ? -1.0 : -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n - 1);
  return align_corners ? v : v * static_cast<double>(n - 1) / static_cast<double>(n);
}

/// theta [N, 2, 3] with size (N, C, H, W) -> grid [N, H, W, 2], or theta [N, 3, 4] with size
/// (N, C, D, H, W) -> grid [N, D, H, W, 3]: each output point is theta times (x, y[, z], 1).
class AffineGridKernel : public Kernel {
 public:
  explicit AffineGridKernel(const KernelInit& init) : align_corners_(init.attr_int("align_corners", 0) != 0) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& theta = ctx.input(0);
    const std::vector<int64_t> size = read_int64s(ctx.input(1));
    if (size.size() != 4 && size.size() != 5) ctx.fail("size must have 4 (N, C, H, W) or 5 (N, C, D, H, W) values");
    const int64_t dims = static_cast<int64_t>(size.size()) - 2;  // 2 or 3 spatial dims
    const int64_t n = size[0];
    if (theta.shape() != Shape{n, dims, dims + 1})
      ctx.fail("theta shape ", shape_to_string(theta.shape()), " must be [", n, ", ", dims, ", ", dims + 1, "]");
    const int64_t depth = dims == 3 ? size[2] : 1, height = size[dims == 3 ? 3 : 2], width = size[dims == 3 ? 4 : 3];
    Shape out_shape{n};
    if (dims == 3) out_shape.push_back(depth);
    out_shape.insert(out_shape.end(), {height, width, dims});
    visit_float_compute(theta.dtype(), ctx, [&](auto tag) {
      using A = typename decltype(tag)::type;
      const std::vector<A> t = load_as<A>(theta);
      AccOutput<A> grid(ctx, 0, theta.dtype(), out_shape);
      int64_t o = 0;
      for (int64_t b = 0; b < n; ++b) {
        const A* m = t.data() + b * dims * (dims + 1);
        for (int64_t z = 0; z < depth; ++z)
          for (int64_t y = 0; y < height; ++y)
            for (int64_t x = 0; x < width; ++x) {
              A point[4] = {static_cast<A>(grid_coordinate(x, width, align_corners_)),
                            static_cast<A>(grid_coordinate(y, height, align_corners_)), A(1), A(1)};
              if (dims == 3) point[2] = static_cast<A>(grid_coordinate(z, depth, align_corners_));
              for (int64_t r = 0; r < dims; ++r) {
                A v = 0;
                for (int64_t c = 0; c <= dims; ++c) v += m[r * (dims + 1) + c] * point[c];
                grid[o++] = v;
              }
            }
      }
      grid.finish();
    });
  }

 private:
  bool align_corners_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "GridSample", (16, 20), GridSampleKernel);
PARITY_REGISTER_KERNEL("", "AffineGrid", 20, AffineGridKernel);

}  // namespace parity::runtime::nn
