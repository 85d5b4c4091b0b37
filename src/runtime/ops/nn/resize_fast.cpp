// Spec: https://onnx.ai/onnx/operators/onnx__Resize.html
// Optimized Resize (opset 11, 13; fp32) for the common image case: only the last two axes change
// (NCHW up/downsampling), mode nearest (every nearest_mode) or linear, any coordinate
// transformation mode but tf_crop_and_resize. Source indices and weights come from the
// reference kernel's formulas (resize.cpp, computed in double) once per call; nearest copies
// elements (bit-identical to the reference) and repeats identical rows with memcpy; linear
// interpolates in float (the reference accumulates in double: differences of an ulp or so),
// along the width once per source row and then between two such rows per output row (LR-ASPP's
// 28 -> 224 upsampling of its 21-class map took 14% of the model before).
// Everything else — cubic, crop-and-resize, other axes, other dtypes — runs the reference kernel.
#include <cmath>
#include <cstring>

#include "runtime/ops/common/elementwise_fast.h"
#include "runtime/ops/common/float_index.h"
#include "runtime/ops/nn/nn_common.h"

namespace parity::runtime::nn {
namespace {

namespace fast = ops::fast;

enum class Coord { kHalfPixel, kPytorchHalfPixel, kAlignCorners, kAsymmetric, kTfHalfPixelForNn };
enum class Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

/// Per output index of one axis: the source indices and weights (w1 = 0 for nearest).
struct AxisMap {
  std::vector<int64_t> i0, i1;
  std::vector<float> w0, w1;
};

/// The last two source rows interpolated along the width, keyed by their flat row index.
class WidthRows {
 public:
  explicit WidthRows(int64_t width)
      : rows_{std::vector<float>(static_cast<size_t>(width)), std::vector<float>(static_cast<size_t>(width))} {}
  /// Row `key`, computed by fill(buffer) unless it is one of the two kept; evicts the older one.
  template <typename Fill>
  const float* get(int64_t key, const Fill& fill) {
    for (int slot = 0; slot < 2; ++slot)
      if (keys_[slot] == key) {
        last_ = slot;
        return rows_[slot].data();
      }
    last_ = 1 - last_;
    keys_[last_] = key;
    fill(rows_[last_].data());
    return rows_[last_].data();
  }

 private:
  std::vector<float> rows_[2];
  int64_t keys_[2] = {-1, -1};
  int last_ = 1;  // the slot used most recently
};

class ResizeFast final : public Kernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    if (init.precision() != Precision::kFloat32) return nullptr;
    const DType x_type = init.input_dtype(0);
    if (x_type != DType::kFloat32 && x_type != DType::kUndefined) return nullptr;
    // Opset 18's axes, aspect-ratio policies and antialiasing change which sizes and taps apply.
    if (init.has_attr("axes") || init.attr_int("antialias", 0) != 0 ||
        init.attr_string("keep_aspect_ratio_policy", "stretch") != "stretch")
      return nullptr;
    auto kernel = std::unique_ptr<ResizeFast>(new ResizeFast());
    const std::string mode = init.attr_string("mode", "nearest");
    if (mode == "nearest") kernel->linear_ = false;
    else if (mode == "linear") kernel->linear_ = true;
    else return nullptr;
    const std::string c = init.attr_string("coordinate_transformation_mode", "half_pixel");
    if (c == "half_pixel") kernel->coord_ = Coord::kHalfPixel;
    else if (c == "pytorch_half_pixel") kernel->coord_ = Coord::kPytorchHalfPixel;
    else if (c == "align_corners") kernel->coord_ = Coord::kAlignCorners;
    else if (c == "asymmetric") kernel->coord_ = Coord::kAsymmetric;
    else if (c == "tf_half_pixel_for_nn") kernel->coord_ = Coord::kTfHalfPixelForNn;
    else return nullptr;
    const std::string n = init.attr_string("nearest_mode", "round_prefer_floor");
    if (n == "round_prefer_floor") kernel->nearest_ = Nearest::kRoundPreferFloor;
    else if (n == "round_prefer_ceil") kernel->nearest_ = Nearest::kRoundPreferCeil;
    else if (n == "floor") kernel->nearest_ = Nearest::kFloor;
    else if (n == "ceil") kernel->nearest_ = Nearest::kCeil;
    else return nullptr;
    kernel->reference_ = init.create_reference_kernel();
    return kernel;
  }

  void compute(KernelContext& ctx) const override {
    if (!try_fast(ctx)) reference_->compute(ctx);
  }

 private:
  ResizeFast() = default;

  bool try_fast(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    if (x.dtype() != DType::kFloat32 || rank < 2 || x.numel() == 0) return false;
    // Output sizes and scales exactly as the reference kernel derives them.
    std::vector<double> scales;
    std::vector<int64_t> sizes;
    if (ctx.has_input(2)) scales = read_doubles(ctx.input(2));
    if (ctx.has_input(3)) sizes = read_int64s(ctx.input(3));
    if (scales.empty() == sizes.empty()) return false;  // the reference reports the error
    std::vector<int64_t> out(static_cast<size_t>(rank));
    if (!sizes.empty()) {
      if (static_cast<int64_t>(sizes.size()) != rank) return false;
      scales.resize(static_cast<size_t>(rank));
      for (int64_t d = 0; d < rank; ++d) {
        if (sizes[d] < 0) return false;
        out[d] = sizes[d];
        scales[d] = static_cast<double>(sizes[d]) / static_cast<double>(x.dim(d));
      }
    } else {
      if (static_cast<int64_t>(scales.size()) != rank) return false;
      for (int64_t d = 0; d < rank; ++d) {
        const double length = std::floor(static_cast<double>(x.dim(d)) * scales[d]);
        if (!(scales[d] > 0) || !fits_int64(length)) return false;  // the reference kernel reports it
        out[d] = static_cast<int64_t>(length);
      }
    }
    for (int64_t d = 0; d + 2 < rank; ++d)
      if (!is_identity(x.dim(d), out[d], scales[d])) return false;
    const int64_t in_h = x.dim(rank - 2), in_w = x.dim(rank - 1);
    const int64_t out_h = out[rank - 2], out_w = out[rank - 1];
    Shape out_shape = x.shape();
    out_shape[rank - 2] = out_h;
    out_shape[rank - 1] = out_w;
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, out_shape);
    if (y.numel() == 0) return true;
    const AxisMap rows = axis_map(in_h, out_h, scales[rank - 2]);
    const AxisMap cols = axis_map(in_w, out_w, scales[rank - 1]);
    const int64_t planes = x.numel() / (in_h * in_w);
    const float* src = x.data<float>();
    float* dst = y.data<float>();
    const int64_t total_rows = planes * out_h;
    const int64_t min_rows = std::max<int64_t>(1, fast::kMinParallelElements / std::max<int64_t>(out_w, 1));
    fast::parallel_chunks(ctx, total_rows, min_rows, [&](int64_t begin, int64_t end) {
      // Linear: source rows interpolated along the width once each (two cached), then every
      // output row is a contiguous blend of two of them; an 8x upsampling interpolates 8 times
      // fewer rows horizontally than it writes.
      WidthRows width_rows(linear_ ? out_w : 0);
      for (int64_t r = begin; r < end; ++r) {
        const int64_t plane = r / out_h, oy = r % out_h;
        float* drow = dst + r * out_w;
        // Rows built from the same sources as the previous row are copies of it.
        if (r > begin && oy > 0 && rows.i0[oy] == rows.i0[oy - 1] &&
            (!linear_ || (rows.i1[oy] == rows.i1[oy - 1] && rows.w0[oy] == rows.w0[oy - 1] &&
                          rows.w1[oy] == rows.w1[oy - 1]))) {
          std::memcpy(drow, drow - out_w, static_cast<size_t>(out_w) * sizeof(float));
          continue;
        }
        const float* s0 = src + (plane * in_h + rows.i0[oy]) * in_w;
        if (!linear_) {
          for (int64_t ox = 0; ox < out_w; ++ox) drow[ox] = s0[cols.i0[ox]];
          continue;
        }
        // Taps of weight 0 are skipped, as in the reference, so they cannot bring in a NaN or Inf.
        const float a = rows.w0[oy], b = rows.w1[oy];
        const auto width_row = [&](int64_t row) {
          return width_rows.get(plane * in_h + row, [&](float* h) {
            const float* s = src + (plane * in_h + row) * in_w;
            for (int64_t ox = 0; ox < out_w; ++ox) {
              const float c = cols.w0[ox], d = cols.w1[ox];
              h[ox] = d == 0.0f   ? c * s[cols.i0[ox]]
                      : c == 0.0f ? d * s[cols.i1[ox]]
                                  : c * s[cols.i0[ox]] + d * s[cols.i1[ox]];
            }
          });
        };
        if (b == 0.0f) {
          const float* h0 = width_row(rows.i0[oy]);
          for (int64_t ox = 0; ox < out_w; ++ox) drow[ox] = a * h0[ox];
        } else if (a == 0.0f) {
          const float* h1 = width_row(rows.i1[oy]);
          for (int64_t ox = 0; ox < out_w; ++ox) drow[ox] = b * h1[ox];
        } else {
          const float* h0 = width_row(rows.i0[oy]);
          const float* h1 = width_row(rows.i1[oy]);  // never evicts row i0: two rows are kept
          for (int64_t ox = 0; ox < out_w; ++ox) drow[ox] = a * h0[ox] + b * h1[ox];
        }
      }
    });
    return true;
  }

  /// The reference skips axes whose size and scale stay and whose coordinates map to themselves.
  bool is_identity(int64_t in, int64_t out, double scale) const {
    return out == in && scale == 1.0 && coord_ != Coord::kTfHalfPixelForNn;
  }

  AxisMap axis_map(int64_t in, int64_t out, double scale) const {
    AxisMap m;
    m.i0.resize(out);
    m.i1.resize(out);
    m.w0.resize(out);
    m.w1.resize(out);
    if (is_identity(in, out, scale)) {
      for (int64_t o = 0; o < out; ++o) {
        m.i0[o] = m.i1[o] = o;
        m.w0[o] = 1.0f;
        m.w1[o] = 0.0f;
      }
      return m;
    }
    const double len = static_cast<double>(in) * scale;
    const auto clamp = [in](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
    for (int64_t o = 0; o < out; ++o) {
      const double x = static_cast<double>(o);
      double xo = 0;
      switch (coord_) {
        case Coord::kHalfPixel: xo = (x + 0.5) / scale - 0.5; break;
        case Coord::kPytorchHalfPixel: xo = len > 1 ? (x + 0.5) / scale - 0.5 : 0.0; break;
        case Coord::kAlignCorners: xo = len == 1 ? 0.0 : x * static_cast<double>(in - 1) / (len - 1); break;
        case Coord::kAsymmetric: xo = x / scale; break;
        case Coord::kTfHalfPixelForNn: xo = (x + 0.5) / scale; break;
      }
      if (!linear_) {
        int64_t i = 0;
        const double fl = std::floor(xo);
        switch (nearest_) {
          case Nearest::kRoundPreferFloor: i = sample_index(xo - fl == 0.5 ? fl : std::round(xo)); break;
          case Nearest::kRoundPreferCeil: i = sample_index(xo - fl == 0.5 ? fl + 1 : std::round(xo)); break;
          case Nearest::kFloor: i = sample_index(fl); break;
          case Nearest::kCeil: i = sample_index(std::ceil(xo)); break;
        }
        m.i0[o] = m.i1[o] = clamp(i);
        m.w0[o] = 1.0f;
        m.w1[o] = 0.0f;
        continue;
      }
      const int64_t base = sample_index(std::ceil(xo)) - 1;
      const double ratio = xo - static_cast<double>(base);
      m.i0[o] = clamp(base);
      m.i1[o] = clamp(base + 1);
      m.w0[o] = static_cast<float>(1 - ratio);
      m.w1[o] = static_cast<float>(ratio);
    }
    return m;
  }

  bool linear_ = false;
  Coord coord_ = Coord::kHalfPixel;
  Nearest nearest_ = Nearest::kRoundPreferFloor;
  std::unique_ptr<Kernel> reference_;
};

}  // namespace

PARITY_REGISTER_OPTIMIZED_KERNEL("", "Resize", (11, 13, 18, 19), ResizeFast);

}  // namespace parity::runtime::nn
