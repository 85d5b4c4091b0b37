// Conv, ConvInteger, QLinearConv: https://github.com/onnx/onnx/blob/main/docs/Operators.md#Conv
//
// Direct convolution: for each (batch, output channel) plane, every (input channel, kernel offset)
// pair adds a scaled, shifted copy of the input rows into the output rows. The innermost loop runs
// along the last spatial dimension over a precomputed valid range, so it has no bounds checks and
// vectorizes when the stride is 1.
#include <cmath>
#include <limits>

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
    if (w.dtype() != x.dtype()) ctx.fail("X and W dtypes differ");
    const bool has_bias = ctx.has_input(2);
    if (has_bias && ctx.input(2).numel() != p.out_channels)
      ctx.fail("bias B has ", ctx.input(2).numel(), " values, expected ", p.out_channels);
    visit_float_compute(x.dtype(), ctx, [&](auto tag) {
      using A = typename decltype(tag)::type;
      AccInput<A> xv(x), wv(w);
      std::optional<AccInput<A>> bv;
      if (has_bias) bv.emplace(ctx.input(2));
      AccOutput<A> y(ctx, 0, x.dtype(), p.output_shape());
      conv_forward<A>(p, xv.data(), wv.data(), has_bias ? bv->data() : nullptr, y.data(), ctx);
      y.finish();
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
      q[i] = static_cast<int32_t>(std::clamp(std::nearbyint(scaled) + static_cast<double>(y_zp), lo, hi));
    }
    Tensor& y = ctx.allocate_output(0, out_dtype, p.output_shape());
    store_to(y, q);
  }

 private:
  ConvAttrs attrs_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Conv", 1, ConvKernel);
PARITY_REGISTER_KERNEL("", "Conv", 11, ConvKernel);
PARITY_REGISTER_KERNEL("", "ConvInteger", 10, ConvIntegerKernel);
PARITY_REGISTER_KERNEL("", "QLinearConv", 10, QLinearConvKernel);

}  // namespace parity::runtime::nn
