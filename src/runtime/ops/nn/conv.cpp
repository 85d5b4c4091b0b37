// Spec: https://onnx.ai/onnx/operators/onnx__Conv.html, onnx__ConvInteger.html,
//       onnx__QLinearConv.html, onnx__CausalConvWithState.html, onnx__DeformConv.html
// Conv, ConvInteger, QLinearConv; CausalConvWithState (opset 27); DeformConv (opset 19, 2-D).
//
// Direct convolution: for each (batch, output channel) plane, every (input channel, kernel offset)
// pair adds a scaled, shifted copy of the input rows into the output rows. The innermost loop runs
// along the last spatial dimension over a precomputed valid range, so it has no bounds checks and
// vectorizes when the stride is 1.
#include <cmath>
#include <limits>

#include "runtime/ops/common/float_index.h"
#include "runtime/ops/nn/conv_core.h"

namespace parity::runtime::nn {

ConvProblem make_conv_problem(const Shape& x_shape, const Shape& w_shape, int64_t group,
                              const WindowAttrs& attrs, const KernelContext& ctx) {
  if (x_shape.size() < 3) ctx.fail("input X must have rank >= 3, got shape ", shape_to_string(x_shape));
  if (w_shape.size() != x_shape.size())
    ctx.fail("weight W has shape ", shape_to_string(w_shape), " but X has shape ", shape_to_string(x_shape));
  ConvProblem p;
  p.batch = x_shape[0];
  p.in_channels = x_shape[1];
  p.out_channels = w_shape[0];
  p.group = group;
  if (group <= 0 || p.in_channels % group != 0 || p.out_channels % group != 0)
    ctx.fail("group ", group, " does not divide input channels ", p.in_channels, " and output channels ",
             p.out_channels);
  if (w_shape[1] * group != p.in_channels)
    ctx.fail("weight W has ", w_shape[1], " input channels per group but X has ", p.in_channels, " channels and group ",
             group);
  const std::vector<int64_t> in_spatial(x_shape.begin() + 2, x_shape.end());
  const std::vector<int64_t> kernel(w_shape.begin() + 2, w_shape.end());
  if (!attrs.kernel_shape.empty() && attrs.kernel_shape != kernel)
    ctx.fail("kernel_shape attribute does not match the weight shape ", shape_to_string(w_shape));
  p.geom = resolve_window(attrs, in_spatial, kernel, ctx);
  return p;
}

Shape ConvProblem::output_shape() const {
  Shape s{batch, out_channels};
  s.insert(s.end(), geom.out.begin(), geom.out.end());
  return s;
}

namespace {

/// Shared Conv attribute parsing.
struct ConvAttrs {
  WindowAttrs window;
  int64_t group = 1;
  explicit ConvAttrs(const KernelInit& init)
      : window(WindowAttrs::parse(init, /*has_dilations=*/true, /*has_ceil_mode=*/false)),
        group(init.attr_int("group", 1)) {
    if (group <= 0) init.fail("group must be positive");
  }
};

class ConvKernel : public Kernel {
 public:
  explicit ConvKernel(const KernelInit& init) : attrs_(init) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const ConvProblem p = make_conv_problem(x.shape(), w.shape(), attrs_.group, attrs_.window, ctx);
    run_direct_conv(ctx, p, [&](const auto* xd, const auto* wd, const auto* bd, auto* yd) {
      conv_forward(p, xd, wd, bd, yd, ctx);
    });
  }

 private:
  ConvAttrs attrs_;
};

/// Input tensor minus its zero point (scalar, or per output channel for the weights) as int32.
std::vector<int32_t> subtract_zero_point(const Tensor& t, const Tensor* zero_point, int64_t channels,
                                         const KernelContext& ctx, const char* what) {
  std::vector<int32_t> out = load_as<int32_t>(t);
  if (!zero_point) return out;
  const std::vector<int64_t> zp = read_int64s(*zero_point);
  if (zp.size() == 1) {
    for (auto& v : out) v -= static_cast<int32_t>(zp[0]);
  } else if (static_cast<int64_t>(zp.size()) == channels && channels > 0) {
    const int64_t per = t.numel() / channels;
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < per; ++i) out[c * per + i] -= static_cast<int32_t>(zp[c]);
  } else {
    ctx.fail(what, " zero point has ", zp.size(), " values, expected 1 or ", channels);
  }
  return out;
}

class ConvIntegerKernel : public Kernel {
 public:
  explicit ConvIntegerKernel(const KernelInit& init) : attrs_(init) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const ConvProblem p = make_conv_problem(x.shape(), w.shape(), attrs_.group, attrs_.window, ctx);
    const Tensor* x_zp = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    const Tensor* w_zp = ctx.has_input(3) ? &ctx.input(3) : nullptr;
    if (x_zp && x_zp->numel() != 1) ctx.fail("x_zero_point must be a scalar");
    const std::vector<int32_t> xs = subtract_zero_point(x, x_zp, 1, ctx, "x");
    const std::vector<int32_t> ws = subtract_zero_point(w, w_zp, p.out_channels, ctx, "w");
    Tensor& y = ctx.allocate_output(0, DType::kInt32, p.output_shape());
    conv_forward<int32_t>(p, xs.data(), ws.data(), nullptr, y.data<int32_t>(), ctx);
  }

 private:
  ConvAttrs attrs_;
};

/// Per-tensor or per-output-channel float parameter.
std::vector<double> per_channel(const Tensor& t, int64_t channels, const KernelContext& ctx, const char* what) {
  std::vector<double> v = read_doubles(t);
  if (v.size() == 1) return std::vector<double>(static_cast<size_t>(channels), v[0]);
  if (static_cast<int64_t>(v.size()) != channels) ctx.fail(what, " has ", v.size(), " values, expected 1 or ", channels);
  return v;
}

class QLinearConvKernel : public Kernel {
 public:
  explicit QLinearConvKernel(const KernelInit& init) : attrs_(init) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(3);
    const ConvProblem p = make_conv_problem(x.shape(), w.shape(), attrs_.group, attrs_.window, ctx);
    const double x_scale = scalar_double(ctx, 1, "x_scale");
    const std::vector<double> w_scale = per_channel(ctx.input(4), p.out_channels, ctx, "w_scale");
    const double y_scale = scalar_double(ctx, 6, "y_scale");
    const Tensor& y_zp_t = ctx.input(7);
    const int64_t y_zp = scalar_int64(ctx, 7, "y_zero_point");
    const std::vector<int32_t> xs = subtract_zero_point(x, &ctx.input(2), 1, ctx, "x");
    const std::vector<int32_t> ws = subtract_zero_point(w, &ctx.input(5), p.out_channels, ctx, "w");
    std::vector<int32_t> bias;
    if (ctx.has_input(8)) {
      bias = load_as<int32_t>(ctx.input(8));
      if (static_cast<int64_t>(bias.size()) != p.out_channels) ctx.fail("bias has ", bias.size(), " values");
    }
    std::vector<int32_t> acc(static_cast<size_t>(shape_numel(p.output_shape())));
    conv_forward<int32_t>(p, xs.data(), ws.data(), bias.empty() ? nullptr : bias.data(), acc.data(), ctx);
    const DType out_dtype = y_zp_t.dtype();
    const double lo = out_dtype == DType::kUInt8 ? 0.0 : -128.0;
    const double hi = out_dtype == DType::kUInt8 ? 255.0 : 127.0;
    std::vector<int32_t> q(acc.size());
    const int64_t plane = p.geom.out_numel();
    for (size_t i = 0; i < acc.size(); ++i) {
      const int64_t m = (static_cast<int64_t>(i) / plane) % p.out_channels;
      const double scaled = static_cast<double>(acc[i]) * (x_scale * w_scale[m] / y_scale);
      const double rounded = std::nearbyint(scaled) + static_cast<double>(y_zp);
      q[i] = std::isnan(rounded) ? 0 : static_cast<int32_t>(std::clamp(rounded, lo, hi));  // NaN: a zero y_scale
    }
    Tensor& y = ctx.allocate_output(0, out_dtype, p.output_shape());
    store_to(y, q);
  }

 private:
  ConvAttrs attrs_;
};

/// Depthwise causal 1-D convolution carrying its left context: the input [B, C, L] is prefixed
/// with past_state [B, C, k-1] (zeros when absent), convolved channel by channel with weight
/// [C, 1, k] (+ bias), optionally followed by SiLU; present_state is the last k-1 columns of the
/// prefixed input.
class CausalConvWithStateKernel : public Kernel {
 public:
  explicit CausalConvWithStateKernel(const KernelInit& init) {
    const std::string activation = init.attr_string("activation", "none");
    if (activation != "none" && activation != "silu" && activation != "swish")
      init.fail("activation must be none, silu or swish, got '", activation, "'");
    silu_ = activation != "none";
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    if (x.rank() != 3) ctx.fail("input must be 3-D [batch, channels, length], got ", shape_to_string(x.shape()));
    const int64_t b = x.dim(0), c = x.dim(1), len = x.dim(2);
    if (w.rank() != 3 || w.dim(0) != c || w.dim(1) != 1 || w.dim(2) < 1)
      ctx.fail("weight shape ", shape_to_string(w.shape()), " is not [", c, ", 1, k]");
    const int64_t k = w.dim(2), ctx_len = k - 1;
    if (ctx.has_input(2) && ctx.input(2).numel() != c) ctx.fail("bias must have ", c, " values");
    if (ctx.has_input(3) && ctx.input(3).shape() != Shape{b, c, ctx_len})
      ctx.fail("past_state shape ", shape_to_string(ctx.input(3).shape()), " is not [", b, ", ", c, ", ", ctx_len, "]");
    visit_float_compute(x.dtype(), ctx, [&](auto tag) {
      using A = typename decltype(tag)::type;
      const AccInput<A> xv(x);
      const std::vector<A> wv = load_as<A>(w);
      const std::vector<A> bias = ctx.has_input(2) ? load_as<A>(ctx.input(2)) : std::vector<A>(static_cast<size_t>(c), A(0));
      const std::vector<A> past =
          ctx.has_input(3) ? load_as<A>(ctx.input(3)) : std::vector<A>(static_cast<size_t>(b * c * ctx_len), A(0));
      AccOutput<A> y(ctx, 0, x.dtype(), x.shape());
      std::vector<A> present(static_cast<size_t>(b * c * ctx_len));
      std::vector<A> padded(static_cast<size_t>(len + ctx_len));
      for (int64_t bc = 0; bc < b * c; ++bc) {
        const int64_t ch = bc % c;
        std::copy(past.begin() + bc * ctx_len, past.begin() + (bc + 1) * ctx_len, padded.begin());
        std::copy(xv.data() + bc * len, xv.data() + (bc + 1) * len, padded.begin() + ctx_len);
        for (int64_t t = 0; t < len; ++t) {
          A acc = bias[ch];
          for (int64_t j = 0; j < k; ++j) acc += wv[ch * k + j] * padded[t + j];
          y[bc * len + t] = silu_ ? acc / (A(1) + std::exp(-acc)) : acc;
        }
        std::copy(padded.end() - ctx_len, padded.end(), present.begin() + bc * ctx_len);
      }
      y.finish();
      emit_output(ctx, 1, ctx.has_input(3) ? ctx.input(3).dtype() : x.dtype(), Shape{b, c, ctx_len}, present);
    });
  }

 private:
  bool silu_ = false;
};

/// 2-D convolution whose kernel taps sample the input at learned offsets (bilinear, zero outside
/// the image), optionally weighted by a mask. offset is [N, offset_group * kH * kW * 2, oH, oW]
/// holding (dy, dx) per tap; mask is [N, offset_group * kH * kW, oH, oW].
class DeformConvKernel : public Kernel {
 public:
  explicit DeformConvKernel(const KernelInit& init)
      : window_(WindowAttrs::parse(init, /*has_dilations=*/true, /*has_ceil_mode=*/false)),
        group_(init.attr_int("group", 1)),
        offset_group_(init.attr_int("offset_group", 1)) {
    if (group_ <= 0 || offset_group_ <= 0) init.fail("group and offset_group must be positive");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Tensor& offset = ctx.input(2);
    if (x.rank() != 4 || w.rank() != 4) ctx.fail("only 2-D DeformConv (4-D X and W) is supported");
    const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3);
    const int64_t oc = w.dim(0), kh = w.dim(2), kw = w.dim(3);
    if (c % group_ != 0 || oc % group_ != 0 || w.dim(1) != c / group_ || c % offset_group_ != 0)
      ctx.fail("channels (", c, " in, ", oc, " out) do not split into group ", group_, " and offset_group ", offset_group_);
    const WindowGeometry g = resolve_window(window_, {h, wd}, {kh, kw}, ctx);
    const int64_t oh = g.out[0], ow = g.out[1], taps = kh * kw;
    if (offset.shape() != Shape{n, offset_group_ * taps * 2, oh, ow})
      ctx.fail("offset shape ", shape_to_string(offset.shape()), " is not [", n, ", ", offset_group_ * taps * 2, ", ",
               oh, ", ", ow, "]");
    const bool has_mask = ctx.has_input(4);
    if (has_mask && ctx.input(4).shape() != Shape{n, offset_group_ * taps, oh, ow})
      ctx.fail("mask shape ", shape_to_string(ctx.input(4).shape()), " does not match offset");
    if (ctx.has_input(3) && ctx.input(3).numel() != oc) ctx.fail("B must have ", oc, " values");
    visit_float_compute(x.dtype(), ctx, [&](auto tag) {
      using A = typename decltype(tag)::type;
      const AccInput<A> xv(x), wv(w), ov(offset);
      const std::vector<A> mask = has_mask ? load_as<A>(ctx.input(4)) : std::vector<A>();
      const std::vector<A> bias = ctx.has_input(3) ? load_as<A>(ctx.input(3)) : std::vector<A>(static_cast<size_t>(oc), A(0));
      AccOutput<A> y(ctx, 0, x.dtype(), Shape{n, oc, oh, ow});
      const int64_t cpg = c / group_, ocpg = oc / group_, cpo = c / offset_group_;
      for (int64_t b = 0; b < n; ++b)
        for (int64_t o = 0; o < oc; ++o)
          for (int64_t i = 0; i < oh; ++i)
            for (int64_t j = 0; j < ow; ++j) {
              A acc = bias[o];
              const int64_t grp = o / ocpg;
              for (int64_t ci = 0; ci < cpg; ++ci) {
                const int64_t ch = grp * cpg + ci, og = ch / cpo;
                const A* plane = xv.data() + (b * c + ch) * h * wd;
                for (int64_t t = 0; t < taps; ++t) {
                  const int64_t ky = t / kw, kx = t % kw;
                  const int64_t off_c = (og * taps + t) * 2;
                  const A dy = ov[((b * offset_group_ * taps * 2 + off_c) * oh + i) * ow + j];
                  const A dx = ov[((b * offset_group_ * taps * 2 + off_c + 1) * oh + i) * ow + j];
                  const A py = static_cast<A>(i * g.strides[0] - g.pad_begin[0] + ky * g.dilations[0]) + dy;
                  const A px = static_cast<A>(j * g.strides[1] - g.pad_begin[1] + kx * g.dilations[1]) + dx;
                  A v = bilinear(plane, h, wd, py, px);
                  if (has_mask) v *= mask[((b * offset_group_ * taps + og * taps + t) * oh + i) * ow + j];
                  acc += wv[((o * cpg + ci) * kh + ky) * kw + kx] * v;
                }
              }
              y[((b * oc + o) * oh + i) * ow + j] = acc;
            }
      y.finish();
    });
  }

 private:
  template <typename A>
  static A bilinear(const A* plane, int64_t h, int64_t w, A y, A x) {
    const A y0 = std::floor(y), x0 = std::floor(x);
    const A ly = y - y0, lx = x - x0;
    auto at = [&](int64_t yy, int64_t xx) { return yy < 0 || yy >= h || xx < 0 || xx >= w ? A(0) : plane[yy * w + xx]; };
    const int64_t yi = sample_index(y0), xi = sample_index(x0);
    return at(yi, xi) * (1 - ly) * (1 - lx) + at(yi, xi + 1) * (1 - ly) * lx + at(yi + 1, xi) * ly * (1 - lx) +
           at(yi + 1, xi + 1) * ly * lx;
  }

  WindowAttrs window_;
  int64_t group_, offset_group_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Conv", (1, 11), ConvKernel);
PARITY_REGISTER_KERNEL("", "ConvInteger", 10, ConvIntegerKernel);
PARITY_REGISTER_KERNEL("", "QLinearConv", 10, QLinearConvKernel);
PARITY_REGISTER_KERNEL("", "CausalConvWithState", 27, CausalConvWithStateKernel);
PARITY_REGISTER_KERNEL("", "DeformConv", (19, 22), DeformConvKernel);

}  // namespace parity::runtime::nn
