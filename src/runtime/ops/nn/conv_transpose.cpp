// Spec: https://onnx.ai/onnx/operators/onnx__ConvTranspose.html, onnx__Col2Im.html
// ConvTranspose, and Col2Im (opset 18), the block-to-image scatter ConvTranspose is built on
// conceptually.
#include "runtime/ops/nn/conv_core.h"

namespace parity::runtime::nn {

ConvTransposeAttrs ConvTransposeAttrs::parse(const KernelInit& init) {
  ConvTransposeAttrs a;
  a.window = WindowAttrs::parse(init, /*has_dilations=*/true, /*has_ceil_mode=*/false);
  a.group = init.attr_int("group", 1);
  a.output_padding = init.attr_ints("output_padding", {});
  a.output_shape = init.attr_ints("output_shape", {});
  if (a.group <= 0) init.fail("group must be positive");
  return a;
}

ConvProblem make_conv_transpose_problem(const Shape& xs, const Shape& ws, const ConvTransposeAttrs& attrs,
                                      const KernelContext& ctx) {
  if (xs.size() < 3) ctx.fail("input X must have rank >= 3, got shape ", shape_to_string(xs));
  if (ws.size() != xs.size()) ctx.fail("weight W has shape ", shape_to_string(ws), " but X has ", shape_to_string(xs));
  ConvProblem p;
  p.batch = xs[0];
  p.in_channels = xs[1];
  p.group = attrs.group;
  if (ws[0] != p.in_channels) ctx.fail("weight W has ", ws[0], " input channels, X has ", p.in_channels);
  if (p.in_channels % attrs.group != 0) ctx.fail("group ", attrs.group, " does not divide ", p.in_channels, " channels");
  p.out_channels = ws[1] * attrs.group;
  const size_t r = xs.size() - 2;
  WindowGeometry& g = p.geom;
  g.rank = static_cast<int64_t>(r);
  g.in.assign(xs.begin() + 2, xs.end());
  g.kernel.assign(ws.begin() + 2, ws.end());
  if (!attrs.window.kernel_shape.empty() && attrs.window.kernel_shape != g.kernel)
    ctx.fail("kernel_shape attribute does not match the weight shape ", shape_to_string(ws));
  auto per_dim = [&](const std::vector<int64_t>& v, int64_t fallback, const char* what) {
    if (v.empty()) return std::vector<int64_t>(r, fallback);
    if (v.size() != r) ctx.fail(what, " has ", v.size(), " values, expected ", r);
    return v;
  };
  g.strides = per_dim(attrs.window.strides, 1, "strides");
  g.dilations = per_dim(attrs.window.dilations, 1, "dilations");
  const std::vector<int64_t> out_pad = per_dim(attrs.output_padding, 0, "output_padding");
  std::vector<int64_t> pads = attrs.window.pads;
  if (pads.empty() || attrs.window.auto_pad != AutoPad::kNotSet) pads.assign(2 * r, 0);
  if (pads.size() != 2 * r) ctx.fail("pads has ", pads.size(), " values, expected ", 2 * r);
  g.pad_begin.assign(pads.begin(), pads.begin() + r);
  g.pad_end.assign(pads.begin() + r, pads.end());
  g.out.assign(r, 0);
  std::vector<int64_t> target;
  if (!attrs.output_shape.empty()) {
    if (attrs.output_shape.size() != r && attrs.output_shape.size() != r + 2)
      ctx.fail("output_shape has ", attrs.output_shape.size(), " values, expected ", r);
    target.assign(attrs.output_shape.end() - r, attrs.output_shape.end());
  }
  for (size_t i = 0; i < r; ++i) {
    const int64_t full = g.strides[i] * (g.in[i] - 1) + out_pad[i] + (g.kernel[i] - 1) * g.dilations[i] + 1;
    const bool same = attrs.window.auto_pad == AutoPad::kSameUpper || attrs.window.auto_pad == AutoPad::kSameLower;
    if (!target.empty() || same) {
      const int64_t out = !target.empty() ? target[i] : g.in[i] * g.strides[i];
      const int64_t total = full - out;
      // SAME_LOWER puts the larger half of odd padding at the beginning; otherwise at the end.
      const int64_t small = total / 2;
      g.pad_begin[i] = attrs.window.auto_pad == AutoPad::kSameLower ? total - small : small;
      g.pad_end[i] = total - g.pad_begin[i];
      g.out[i] = out;
    } else {
      g.out[i] = full - g.pad_begin[i] - g.pad_end[i];
    }
    if (g.out[i] < 0) ctx.fail("computed output size ", g.out[i], " is negative along spatial dim ", i);
  }
  return p;
}

namespace {


class ConvTransposeKernel : public Kernel {
 public:
  explicit ConvTransposeKernel(const KernelInit& init) : attrs_(ConvTransposeAttrs::parse(init)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const ConvProblem p = make_conv_transpose_problem(x.shape(), w.shape(), attrs_, ctx);
    run_direct_conv(ctx, p, [&](const auto* xd, const auto* wd, const auto* bd, auto* yd) {
      conv_transpose_forward(p, xd, wd, bd, yd, ctx);
    });
  }

 private:
  ConvTransposeAttrs attrs_;
};

/// https://onnx.ai/onnx/operators/onnx__Col2Im.html (opset 18): the inverse of im2col. Input
/// [N, C * prod(block_shape), L] holds, per sliding-block position, that block's values; they are
/// summed back into an [N, C, *image_shape] image (overlapping blocks add).
class Col2ImKernel : public Kernel {
 public:
  explicit Col2ImKernel(const KernelInit& init)
      : dilations_(init.attr_ints("dilations", {})), pads_(init.attr_ints("pads", {})), strides_(init.attr_ints("strides", {})) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> image = read_int64s(ctx.input(1));
    const std::vector<int64_t> block = read_int64s(ctx.input(2));
    const size_t dims = image.size();
    if (dims == 0 || block.size() != dims) ctx.fail("image_shape and block_shape must have the same, non-zero length");
    auto attr_or = [&](const std::vector<int64_t>& v, size_t n, int64_t fallback, const char* what) {
      if (v.empty()) return std::vector<int64_t>(n, fallback);
      if (v.size() != n) ctx.fail("attribute '", what, "' must have ", n, " values");
      return v;
    };
    const auto dil = attr_or(dilations_, dims, 1, "dilations");
    const auto str = attr_or(strides_, dims, 1, "strides");
    const auto pad = attr_or(pads_, 2 * dims, 0, "pads");
    // The sizes come from the model's tensors: checked before they divide, multiply or index.
    for (size_t d = 0; d < dims; ++d) {
      if (image[d] < 1 || block[d] < 1 || str[d] < 1 || dil[d] < 1 || pad[d] < 0 || pad[d + dims] < 0)
        ctx.fail("spatial dim ", d, ": image_shape ", image[d], ", block_shape ", block[d], ", stride ", str[d],
                 ", dilation ", dil[d], " must be 1 or more and pads ", pad[d], ", ", pad[d + dims], " not negative");
    }
    std::vector<int64_t> blocks(dims);  // sliding-block positions per spatial dim
    int64_t block_numel = 1, positions = 1;
    for (size_t d = 0; d < dims; ++d) {
      int64_t span = 0, padded = 0;
      if (__builtin_add_overflow(image[d], pad[d], &padded) || __builtin_add_overflow(padded, pad[d + dims], &padded) ||
          __builtin_mul_overflow(dil[d], block[d] - 1, &span) || span > padded - 1)
        ctx.fail("spatial dim ", d, ": the dilated block (", block[d], " x dilation ", dil[d],
                 ") does not fit the padded image (", image[d], ")");
      blocks[d] = (padded - span - 1) / str[d] + 1;
      if (__builtin_mul_overflow(block_numel, block[d], &block_numel) ||
          __builtin_mul_overflow(positions, blocks[d], &positions))
        ctx.fail("the block or position count overflows 64 bits");
    }
    if (x.rank() != 3 || x.dim(1) % block_numel != 0 || x.dim(2) != positions)
      ctx.fail("input shape ", shape_to_string(x.shape()), " must be [N, C * ", block_numel, ", ", positions, "]");
    const int64_t n = x.dim(0), channels = x.dim(1) / block_numel;
    Shape out_shape{n, channels};
    out_shape.insert(out_shape.end(), image.begin(), image.end());
    const int64_t image_numel = product(image);
    visit_float_compute(x.dtype(), ctx, [&](auto tag) {
      using A = typename decltype(tag)::type;
      AccInput<A> xv(x);
      AccOutput<A> y(ctx, 0, x.dtype(), out_shape);
      std::vector<int64_t> k(dims, 0), l(dims, 0);
      for (int64_t kf = 0; kf < block_numel; ++kf, next_index(k, block)) {
        std::fill(l.begin(), l.end(), 0);
        for (int64_t lf = 0; lf < positions; ++lf, next_index(l, blocks)) {
          int64_t pixel = 0;
          bool inside = true;
          for (size_t d = 0; d < dims && inside; ++d) {
            const int64_t p = l[d] * str[d] - pad[d] + k[d] * dil[d];
            inside = p >= 0 && p < image[d];
            pixel = pixel * image[d] + p;
          }
          if (!inside) continue;
          for (int64_t b = 0; b < n; ++b)
            for (int64_t c = 0; c < channels; ++c)
              y[(b * channels + c) * image_numel + pixel] += xv[((b * channels + c) * block_numel + kf) * positions + lf];
        }
      }
      y.finish();
    });
  }

 private:
  std::vector<int64_t> dilations_, pads_, strides_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "ConvTranspose", (1, 11), ConvTransposeKernel);
PARITY_REGISTER_KERNEL("", "Col2Im", 18, Col2ImKernel);

}  // namespace parity::runtime::nn
