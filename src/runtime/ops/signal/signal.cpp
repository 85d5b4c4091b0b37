// Spec: https://onnx.ai/onnx/operators/onnx__DFT.html, onnx__STFT.html, onnx__HannWindow.html,
//       onnx__HammingWindow.html, onnx__BlackmanWindow.html, onnx__MelWeightMatrix.html
// Signal operators (opset 17): DFT, STFT, HannWindow, HammingWindow, BlackmanWindow, MelWeightMatrix.
// DFT-20 takes the axis as an input (default -2); inverse + onesided is the inverse real FFT.
//
// The DFT is a direct O(n^2) sum with a per-length twiddle table: the reference tier favours
// exactness over speed, and every length (not only powers of two) is handled the same way.
#include <cmath>
#include <numbers>

#include "core/allocation_limit.h"
#include "runtime/ops/common/float_index.h"
#include "runtime/ops/nn/nn_common.h"

namespace parity::runtime::nn {
namespace {

/// out[k] = sum_j in[j] * exp(sign * 2*pi*i * j*k / n) for k in [0, bins); in has `len` <= n
/// complex samples (missing ones are zero).
void dft_1d(const double* re, const double* im, int64_t len, int64_t n, int64_t bins, bool inverse, double* out_re,
            double* out_im, const std::vector<double>& cos_t, const std::vector<double>& sin_t) {
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < bins; ++k) {
    double sr = 0, si = 0;
    int64_t phase = 0;
    for (int64_t j = 0; j < len; ++j) {
      const double c = cos_t[phase], s = sign * sin_t[phase];
      sr += re[j] * c - im[j] * s;
      si += re[j] * s + im[j] * c;
      phase += k;
      if (phase >= n) phase -= n;
    }
    if (inverse) {
      sr /= static_cast<double>(n);
      si /= static_cast<double>(n);
    }
    out_re[k] = sr;
    out_im[k] = si;
  }
}

void twiddles(int64_t n, std::vector<double>& cos_t, std::vector<double>& sin_t) {
  cos_t.resize(static_cast<size_t>(n));
  sin_t.resize(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    const double a = 2.0 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(n);
    cos_t[j] = std::cos(a);
    sin_t[j] = std::sin(a);
  }
}

class DftKernel : public Kernel {
 public:
  explicit DftKernel(const KernelInit& init)
      : axis_(init.attr_int("axis", 1)), axis_from_input_(init.spec().since_version >= 20),
        inverse_(init.attr_int("inverse", 0) != 0), onesided_(init.attr_int("onesided", 0) != 0) {
    if (axis_from_input_) axis_ = -2;  // the default of DFT-20's axis input
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    if (rank < 3) ctx.fail("input must have rank >= 3 ([batch, signal..., 1 or 2])");
    const int64_t comps = x.dim(rank - 1);
    if (comps != 1 && comps != 2) ctx.fail("last dimension must be 1 (real) or 2 (complex), got ", comps);
    const int64_t axis_value = axis_from_input_ && ctx.has_input(2) ? scalar_int64(ctx, 2, "axis") : axis_;
    const int64_t axis = axis_value < 0 ? axis_value + rank : axis_value;
    if (axis < 1 || axis >= rank - 1) ctx.fail("axis ", axis_value, " is not a signal axis for rank ", rank);
    if (inverse_ && onesided_) return inverse_real(ctx, axis);
    const int64_t len_in = x.dim(axis);
    int64_t n = len_in;
    if (ctx.has_input(1)) {
      n = scalar_int64(ctx, 1, "dft_length");
      if (n <= 0) ctx.fail("dft_length must be positive, got ", n);
    }
    const int64_t bins = onesided_ ? n / 2 + 1 : n;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int64_t d = axis + 1; d < rank - 1; ++d) inner *= x.dim(d);
    Shape out_shape = x.shape();
    out_shape[axis] = bins;
    out_shape[rank - 1] = 2;
    const std::vector<double> xv = load_as<double>(x);
    std::vector<double> out(static_cast<size_t>(outer * bins * inner * 2));
    std::vector<double> cos_t, sin_t;
    twiddles(n, cos_t, sin_t);
    const int64_t used = std::min(len_in, n);
    std::vector<double> re(static_cast<size_t>(used)), im(static_cast<size_t>(used)), ore(static_cast<size_t>(bins)),
        oim(static_cast<size_t>(bins));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        for (int64_t j = 0; j < used; ++j) {
          const int64_t src = ((o * len_in + j) * inner + i) * comps;
          re[j] = xv[src];
          im[j] = comps == 2 ? xv[src + 1] : 0.0;
        }
        dft_1d(re.data(), im.data(), used, n, bins, inverse_, ore.data(), oim.data(), cos_t, sin_t);
        for (int64_t k = 0; k < bins; ++k) {
          const int64_t dst = ((o * bins + k) * inner + i) * 2;
          out[dst] = ore[k];
          out[dst + 1] = oim[k];
        }
      }
    emit_output(ctx, 0, x.dtype(), out_shape, out);
  }

 private:
  /// Inverse real DFT: the input holds bins 0..n/2 of a Hermitian spectrum (n = dft_length, or
  /// 2 * (bins - 1)); the rest are the conjugates. The output is the real signal, [..., n, ..., 1].
  void inverse_real(KernelContext& ctx, int64_t axis) const {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    const int64_t comps = x.dim(rank - 1);
    const int64_t given = x.dim(axis);
    const int64_t n = ctx.has_input(1) ? scalar_int64(ctx, 1, "dft_length") : 2 * (given - 1);
    if (n <= 0) ctx.fail("the inverse real DFT needs a positive length, got ", n);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int64_t d = axis + 1; d < rank - 1; ++d) inner *= x.dim(d);
    Shape out_shape = x.shape();
    out_shape[axis] = n;
    out_shape[rank - 1] = 1;
    const std::vector<double> xv = load_as<double>(x);
    std::vector<double> out(static_cast<size_t>(outer * n * inner));
    std::vector<double> cos_t, sin_t;
    twiddles(n, cos_t, sin_t);
    std::vector<double> re(static_cast<size_t>(n)), im(static_cast<size_t>(n)), ore(static_cast<size_t>(n)),
        oim(static_cast<size_t>(n));
    auto bin = [&](int64_t o, int64_t k, int64_t i, double& r, double& m) {
      if (k >= given) return void(r = m = 0.0);
      const int64_t src = ((o * given + k) * inner + i) * comps;
      r = xv[src];
      m = comps == 2 ? xv[src + 1] : 0.0;
    };
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        for (int64_t k = 0; k < n; ++k) {
          if (k <= n / 2) {
            bin(o, k, i, re[k], im[k]);
          } else {
            bin(o, n - k, i, re[k], im[k]);
            im[k] = -im[k];
          }
        }
        dft_1d(re.data(), im.data(), n, n, n, true, ore.data(), oim.data(), cos_t, sin_t);
        for (int64_t k = 0; k < n; ++k) out[(o * n + k) * inner + i] = ore[k];
      }
    emit_output(ctx, 0, x.dtype(), out_shape, out);
  }

  int64_t axis_;
  bool axis_from_input_;
  bool inverse_, onesided_;
};

class StftKernel : public Kernel {
 public:
  explicit StftKernel(const KernelInit& init) : onesided_(init.attr_int("onesided", 1) != 0) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() != 3) ctx.fail("signal must be [batch, length, 1 or 2], got ", shape_to_string(x.shape()));
    const int64_t batch = x.dim(0), length = x.dim(1), comps = x.dim(2);
    if (comps != 1 && comps != 2) ctx.fail("last dimension must be 1 or 2, got ", comps);
    const int64_t step = scalar_int64(ctx, 1, "frame_step");
    if (step <= 0) ctx.fail("frame_step must be positive");
    std::vector<double> window;
    if (ctx.has_input(2)) window = read_doubles(ctx.input(2));
    int64_t frame = static_cast<int64_t>(window.size());
    if (ctx.has_input(3)) {
      const int64_t fl = scalar_int64(ctx, 3, "frame_length");
      if (!window.empty() && fl != frame) ctx.fail("frame_length ", fl, " differs from the window length ", frame);
      frame = fl;
    }
    if (frame <= 0) ctx.fail("a window or a positive frame_length is required");
    if (frame > length) ctx.fail("frame length ", frame, " exceeds the signal length ", length);
    if (window.empty()) window.assign(static_cast<size_t>(frame), 1.0);
    const int64_t frames = (length - frame) / step + 1;
    const int64_t bins = onesided_ ? frame / 2 + 1 : frame;
    const std::vector<double> xv = load_as<double>(x);
    std::vector<double> out(static_cast<size_t>(batch * frames * bins * 2));
    std::vector<double> cos_t, sin_t;
    twiddles(frame, cos_t, sin_t);
    std::vector<double> re(static_cast<size_t>(frame)), im(static_cast<size_t>(frame)), ore(static_cast<size_t>(bins)),
        oim(static_cast<size_t>(bins));
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t f = 0; f < frames; ++f) {
        for (int64_t j = 0; j < frame; ++j) {
          const int64_t src = (b * length + f * step + j) * comps;
          re[j] = xv[src] * window[j];
          im[j] = comps == 2 ? xv[src + 1] * window[j] : 0.0;
        }
        dft_1d(re.data(), im.data(), frame, frame, bins, false, ore.data(), oim.data(), cos_t, sin_t);
        for (int64_t k = 0; k < bins; ++k) {
          const int64_t dst = ((b * frames + f) * bins + k) * 2;
          out[dst] = ore[k];
          out[dst + 1] = oim[k];
        }
      }
    emit_output(ctx, 0, x.dtype(), Shape{batch, frames, bins, 2}, out);
  }

 private:
  bool onesided_;
};

/// Generalized cosine window: sum_k a_k * cos(2*pi*k*n / D), D = N (periodic) or N - 1.
class CosineWindowKernel : public Kernel {
 public:
  CosineWindowKernel(const KernelInit& init, std::vector<double> coeffs)
      : coeffs_(std::move(coeffs)),
        periodic_(init.attr_int("periodic", 1) != 0),
        dtype_(compute_dtype(static_cast<DType>(init.attr_int("output_datatype", 1)), init.precision())) {
    if (!is_valid_dtype(dtype_) || dtype_ == DType::kString || is_complex(dtype_))
      init.fail("unsupported output_datatype ", static_cast<int>(dtype_));
  }

  void compute(KernelContext& ctx) const override {
    const int64_t n = scalar_int64(ctx, 0, "size");
    if (n < 0) ctx.fail("size must be non-negative, got ", n);
    const double denom = static_cast<double>(periodic_ ? n : n - 1);
    std::vector<double> w(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      double v = 0;
      for (size_t k = 0; k < coeffs_.size(); ++k)
        v += coeffs_[k] * (denom == 0 ? 1.0 : std::cos(2.0 * std::numbers::pi * static_cast<double>(k * i) / denom));
      w[i] = v;
    }
    emit_output(ctx, 0, dtype_, Shape{n}, w);
  }

 private:
  std::vector<double> coeffs_;
  bool periodic_;
  DType dtype_;
};

struct HannWindowKernel : CosineWindowKernel {
  explicit HannWindowKernel(const KernelInit& init) : CosineWindowKernel(init, {0.5, -0.5}) {}
};
struct HammingWindowKernel : CosineWindowKernel {
  explicit HammingWindowKernel(const KernelInit& init) : CosineWindowKernel(init, {25.0 / 46, -(1 - 25.0 / 46)}) {}
};
struct BlackmanWindowKernel : CosineWindowKernel {
  explicit BlackmanWindowKernel(const KernelInit& init) : CosineWindowKernel(init, {0.42, -0.5, 0.08}) {}
};

/// Triangular mel filters as the ONNX reference builds them: band edges equally spaced on the
/// mel scale, snapped down to DFT bins.
class MelWeightMatrixKernel : public Kernel {
 public:
  explicit MelWeightMatrixKernel(const KernelInit& init)
      : dtype_(compute_dtype(static_cast<DType>(init.attr_int("output_datatype", 1)), init.precision())) {}

  void compute(KernelContext& ctx) const override {
    const int64_t mel_bins = scalar_int64(ctx, 0, "num_mel_bins");
    const int64_t dft_length = scalar_int64(ctx, 1, "dft_length");
    const int64_t sample_rate = scalar_int64(ctx, 2, "sample_rate");
    const double lower = scalar_double(ctx, 3, "lower_edge_hertz");
    const double upper = scalar_double(ctx, 4, "upper_edge_hertz");
    if (mel_bins <= 0 || dft_length <= 0 || sample_rate <= 0) ctx.fail("num_mel_bins, dft_length and sample_rate must be positive");
    if (!(lower >= 0 && upper > lower && std::isfinite(upper)))
      ctx.fail("need 0 <= lower_edge_hertz < upper_edge_hertz < infinity, got ", lower, " and ", upper);
    const int64_t spectrum_bins = dft_length / 2 + 1;
    checked_tensor_bytes(DType::kFloat64, Shape{spectrum_bins, mel_bins});  // the matrix built below
    auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
    const double low_mel = to_mel(lower), high_mel = to_mel(upper);
    const double step = (high_mel - low_mel) / static_cast<double>(mel_bins + 2);
    std::vector<int64_t> edges(static_cast<size_t>(mel_bins + 2));
    for (int64_t i = 0; i < mel_bins + 2; ++i) {
      const double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * step + low_mel) / 2595.0) - 1.0);
      edges[i] = sample_index(std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate)));
    }
    std::vector<double> out(static_cast<size_t>(spectrum_bins * mel_bins), 0.0);
    auto set = [&](int64_t j, int64_t i, double v) {
      if (j < 0 || j >= spectrum_bins) ctx.fail("mel band edge ", j, " is outside the spectrum");
      out[j * mel_bins + i] = v;
    };
    for (int64_t i = 0; i < mel_bins; ++i) {
      const int64_t lo = edges[i], center = edges[i + 1], hi = edges[i + 2];
      if (center == lo) {
        set(center, i, 1.0);
      } else {
        for (int64_t j = lo; j <= center; ++j) set(j, i, static_cast<double>(j - lo) / static_cast<double>(center - lo));
      }
      if (hi > center)
        for (int64_t j = center; j < hi; ++j) set(j, i, static_cast<double>(hi - j) / static_cast<double>(hi - center));
    }
    emit_output(ctx, 0, dtype_, Shape{spectrum_bins, mel_bins}, out);
  }

 private:
  DType dtype_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "DFT", (17, 19, 20), DftKernel);
PARITY_REGISTER_KERNEL("", "STFT", 17, StftKernel);
PARITY_REGISTER_KERNEL("", "HannWindow", 17, HannWindowKernel);
PARITY_REGISTER_KERNEL("", "HammingWindow", 17, HammingWindowKernel);
PARITY_REGISTER_KERNEL("", "BlackmanWindow", 17, BlackmanWindowKernel);
PARITY_REGISTER_KERNEL("", "MelWeightMatrix", 17, MelWeightMatrixKernel);

}  // namespace parity::runtime::nn
