#include "runtime/ops/nn/nn_common.h"

namespace parity::runtime::nn {

std::vector<int64_t> read_int64s(const Tensor& t) {
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  visit_numeric_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) out[i] = convert_scalar<int64_t>(p[i]);
  });
  return out;
}

std::vector<double> read_doubles(const Tensor& t) { return load_as<double>(t); }

double scalar_double(const KernelContext& ctx, size_t i, const char* what) {
  const Tensor& t = ctx.input(i);
  if (t.numel() != 1) ctx.fail(what, " must hold one value, got shape ", shape_to_string(t.shape()));
  if (t.dtype() == DType::kString || is_complex(t.dtype())) ctx.fail(what, " must be numeric");
  return t.value_as_double(0);
}

int64_t scalar_int64(const KernelContext& ctx, size_t i, const char* what) {
  const Tensor& t = ctx.input(i);
  if (t.numel() != 1) ctx.fail(what, " must hold one value, got shape ", shape_to_string(t.shape()));
  if (t.dtype() == DType::kString || is_complex(t.dtype())) ctx.fail(what, " must be numeric");
  return read_int64s(t)[0];
}

AutoPad parse_auto_pad(const KernelInit& init) {
  const std::string s = init.attr_string("auto_pad", "NOTSET");
  if (s == "NOTSET" || s.empty()) return AutoPad::kNotSet;
  if (s == "SAME_UPPER") return AutoPad::kSameUpper;
  if (s == "SAME_LOWER") return AutoPad::kSameLower;
  if (s == "VALID") return AutoPad::kValid;
  init.fail("unknown auto_pad '", s, "'");
}

WindowAttrs WindowAttrs::parse(const KernelInit& init, bool has_dilations, bool has_ceil_mode) {
  WindowAttrs a;
  a.kernel_shape = init.attr_ints("kernel_shape", {});
  a.strides = init.attr_ints("strides", {});
  if (has_dilations) a.dilations = init.attr_ints("dilations", {});
  a.pads = init.attr_ints("pads", {});
  a.auto_pad = parse_auto_pad(init);
  if (has_ceil_mode) a.ceil_mode = init.attr_int("ceil_mode", 0) != 0;
  for (int64_t k : a.kernel_shape)
    if (k <= 0) init.fail("kernel_shape values must be positive");
  for (int64_t s : a.strides)
    if (s <= 0) init.fail("strides must be positive");
  for (int64_t d : a.dilations)
    if (d <= 0) init.fail("dilations must be positive");
  for (int64_t p : a.pads)
    if (p < 0) init.fail("pads must be non-negative");
  return a;
}

int64_t WindowGeometry::in_numel() const { return product(in); }
int64_t WindowGeometry::out_numel() const { return product(out); }
int64_t WindowGeometry::kernel_numel() const { return product(kernel); }

WindowGeometry resolve_window(const WindowAttrs& attrs, const std::vector<int64_t>& in_spatial,
                              const std::vector<int64_t>& kernel, const KernelContext& ctx) {
  WindowGeometry g;
  g.rank = static_cast<int64_t>(in_spatial.size());
  const size_t r = in_spatial.size();
  g.in = in_spatial;
  g.kernel = attrs.kernel_shape.empty() ? kernel : attrs.kernel_shape;
  if (g.kernel.size() != r) ctx.fail("kernel has ", g.kernel.size(), " dims but the input has ", r, " spatial dims");
  auto per_dim = [&](const std::vector<int64_t>& v, const char* what) {
    if (v.empty()) return std::vector<int64_t>(r, 1);
    if (v.size() != r) ctx.fail(what, " has ", v.size(), " values but the input has ", r, " spatial dims");
    return v;
  };
  g.strides = per_dim(attrs.strides, "strides");
  g.dilations = per_dim(attrs.dilations, "dilations");
  g.pad_begin.assign(r, 0);
  g.pad_end.assign(r, 0);
  g.out.assign(r, 0);
  if (attrs.auto_pad == AutoPad::kNotSet && !attrs.pads.empty()) {
    if (attrs.pads.size() != 2 * r) ctx.fail("pads has ", attrs.pads.size(), " values, expected ", 2 * r);
    for (size_t i = 0; i < r; ++i) {
      g.pad_begin[i] = attrs.pads[i];
      g.pad_end[i] = attrs.pads[i + r];
    }
  }
  for (size_t i = 0; i < r; ++i) {
    const int64_t ek = (g.kernel[i] - 1) * g.dilations[i] + 1;
    const int64_t s = g.strides[i];
    switch (attrs.auto_pad) {
      case AutoPad::kSameUpper:
      case AutoPad::kSameLower: {
        g.out[i] = ceil_div(g.in[i], s);
        const int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * s + ek - g.in[i]);
        const int64_t small = total / 2;
        g.pad_begin[i] = attrs.auto_pad == AutoPad::kSameUpper ? small : total - small;
        g.pad_end[i] = total - g.pad_begin[i];
        break;
      }
      case AutoPad::kValid:
        g.out[i] = floor_div(g.in[i] - ek, s) + 1;
        break;
      case AutoPad::kNotSet: {
        const int64_t span = g.in[i] + g.pad_begin[i] + g.pad_end[i] - ek;
        if (attrs.ceil_mode) {
          g.out[i] = ceil_div(span, s) + 1;
          // A window that would start in the end padding is dropped (PyTorch/ONNX semantics).
          if ((g.out[i] - 1) * s >= g.in[i] + g.pad_begin[i]) --g.out[i];
        } else {
          g.out[i] = floor_div(span, s) + 1;
        }
        break;
      }
    }
    if (g.out[i] < 0) g.out[i] = 0;
    if (g.out[i] == 0 && g.in[i] > 0)
      ctx.fail("kernel (", ek, ") is larger than the padded input (", g.in[i] + g.pad_begin[i] + g.pad_end[i],
               ") along spatial dim ", i);
  }
  return g;
}

}  // namespace parity::runtime::nn
