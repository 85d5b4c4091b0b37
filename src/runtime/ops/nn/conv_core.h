// Direct N-d convolution loops shared by Conv, ConvInteger and QLinearConv (templated on the
// accumulation type), and the transposed variant used by ConvTranspose.
#pragma once

#include <optional>

#include "runtime/ops/nn/nn_common.h"

namespace parity::runtime::nn {

struct ConvProblem {
  int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
  WindowGeometry geom;  // for ConvTranspose: in = X spatial, out = Y spatial
  Shape output_shape() const;
};

ConvProblem make_conv_problem(const Shape& x_shape, const Shape& w_shape, int64_t group,
                              const WindowAttrs& attrs, const KernelContext& ctx);

/// ConvTranspose attributes, parsed once at plan time.
struct ConvTransposeAttrs {
  WindowAttrs window;
  int64_t group = 1;
  std::vector<int64_t> output_padding, output_shape;
  static ConvTransposeAttrs parse(const KernelInit& init);
};

/// ConvTranspose geometry: geom.in is X's spatial shape, geom.out Y's (from output_shape,
/// auto_pad or pads/output_padding); pad_end may be negative when output_shape asks for more
/// than the pads give.
ConvProblem make_conv_transpose_problem(const Shape& x_shape, const Shape& w_shape, const ConvTransposeAttrs& attrs,
                                        const KernelContext& ctx);

/// For every spatial dim but the last: table[k * count + j] = the index along the other side of
/// the window relation for kernel offset k and position j, or -1 when outside. `forward` maps an
/// output position o to the input index o*stride - pad + k*dilation; otherwise an input position
/// i maps to the output index i*stride - pad + k*dilation.
inline std::vector<std::vector<int64_t>> leading_dim_tables(const WindowGeometry& g, bool forward) {
  std::vector<std::vector<int64_t>> tables;
  for (int64_t d = 0; d + 1 < g.rank; ++d) {
    const int64_t count = forward ? g.out[d] : g.in[d];
    const int64_t limit = forward ? g.in[d] : g.out[d];
    std::vector<int64_t> t(static_cast<size_t>(g.kernel[d] * count));
    for (int64_t k = 0; k < g.kernel[d]; ++k)
      for (int64_t j = 0; j < count; ++j) {
        const int64_t v = j * g.strides[d] - g.pad_begin[d] + k * g.dilations[d];
        t[k * count + j] = (v >= 0 && v < limit) ? v : -1;
      }
    tables.push_back(std::move(t));
  }
  return tables;
}

/// y[n, m] = bias[m] + sum_{c in group(m), k} w[m, c, k] * x[n, c, o*s - p + k*d].
/// Layouts: x [N, C, in...], w [M, C/group, kernel...], y [N, M, out...], bias [M] or null.
template <typename A>
void conv_forward(const ConvProblem& p, const A* x, const A* w, const A* bias, A* y, KernelContext& ctx) {
  const WindowGeometry& g = p.geom;
  const int64_t r = g.rank;
  const int64_t in_plane = g.in_numel(), out_plane = g.out_numel(), k_numel = g.kernel_numel();
  const int64_t c_per_group = p.in_channels / p.group, m_per_group = p.out_channels / p.group;
  const int64_t last = r - 1;
  const int64_t out_w = g.out[last], in_w = g.in[last], stride_w = g.strides[last];
  // Valid output range and input offset along the last dim, per kernel offset.
  std::vector<int64_t> lo(g.kernel[last]), hi(g.kernel[last]), shift(g.kernel[last]);
  for (int64_t k = 0; k < g.kernel[last]; ++k) {
    shift[k] = k * g.dilations[last] - g.pad_begin[last];
    lo[k] = std::max<int64_t>(0, ceil_div(-shift[k], stride_w));
    hi[k] = std::min<int64_t>(out_w, floor_div(in_w - 1 - shift[k], stride_w) + 1);
  }
  const auto tables = leading_dim_tables(g, /*forward=*/true);
  const std::vector<int64_t> lead_out(g.out.begin(), g.out.end() - 1);
  const std::vector<int64_t> in_strides = shape_strides(g.in);
  const int64_t lead_rows = product(lead_out);
  bool pointwise = k_numel == 1 && g.out == g.in;
  for (int64_t d = 0; d < r; ++d) pointwise = pointwise && g.strides[d] == 1 && g.pad_begin[d] == 0;

  ctx.parallel_for(p.batch * p.out_channels, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> kidx(static_cast<size_t>(r)), oidx(static_cast<size_t>(r > 0 ? r - 1 : 0));
    for (int64_t nm = begin; nm < end; ++nm) {
      const int64_t n = nm / p.out_channels, m = nm % p.out_channels;
      const int64_t grp = m / m_per_group;
      A* yp = y + nm * out_plane;
      const A init = bias ? bias[m] : A(0);
      std::fill(yp, yp + out_plane, init);
      if (pointwise) {  // 1x1 kernel, stride 1, no padding: each channel adds a scaled plane
        for (int64_t c = 0; c < c_per_group; ++c) {
          const A* xp = x + (n * p.in_channels + grp * c_per_group + c) * in_plane;
          const A wv = w[m * c_per_group + c];
          for (int64_t i = 0; i < out_plane; ++i) yp[i] += wv * xp[i];
        }
        continue;
      }
      for (int64_t c = 0; c < c_per_group; ++c) {
        const A* xp = x + (n * p.in_channels + grp * c_per_group + c) * in_plane;
        const A* wp = w + (m * c_per_group + c) * k_numel;
        std::fill(kidx.begin(), kidx.end(), 0);
        for (int64_t kf = 0; kf < k_numel; ++kf, next_index(kidx, g.kernel)) {
          const A wv = wp[kf];
          const int64_t kl = kidx[last];
          const int64_t o_lo = lo[kl], o_hi = hi[kl];
          if (o_lo >= o_hi) continue;
          std::fill(oidx.begin(), oidx.end(), 0);
          for (int64_t row = 0; row < lead_rows; ++row, next_index(oidx, lead_out)) {
            int64_t in_off = 0;
            bool valid = true;
            for (int64_t d = 0; d < last; ++d) {
              const int64_t i = tables[d][kidx[d] * g.out[d] + oidx[d]];
              if (i < 0) {
                valid = false;
                break;
              }
              in_off += i * in_strides[d];
            }
            if (!valid) continue;
            A* yr = yp + row * out_w;
            const A* xr = xp + in_off + shift[kl];
            if (stride_w == 1) {
              for (int64_t o = o_lo; o < o_hi; ++o) yr[o] += wv * xr[o];
            } else {
              for (int64_t o = o_lo; o < o_hi; ++o) yr[o] += wv * xr[o * stride_w];
            }
          }
        }
      }
    }
  });
}

/// Transposed convolution: y[n, m, i*s - p + k*d] += x[n, c, i] * w[c, m % (M/group), k].
/// Layouts: x [N, C, in...], w [C, M/group, kernel...], y [N, M, out...] (zeroed or bias-filled here).
template <typename A>
void conv_transpose_forward(const ConvProblem& p, const A* x, const A* w, const A* bias, A* y, KernelContext& ctx) {
  const WindowGeometry& g = p.geom;
  const int64_t r = g.rank;
  const int64_t in_plane = g.in_numel(), out_plane = g.out_numel(), k_numel = g.kernel_numel();
  const int64_t c_per_group = p.in_channels / p.group, m_per_group = p.out_channels / p.group;
  const int64_t last = r - 1;
  const int64_t out_w = g.out[last], in_w = g.in[last], stride_w = g.strides[last];
  // Valid input range along the last dim per kernel offset (output index i*s + shift in range).
  std::vector<int64_t> lo(g.kernel[last]), hi(g.kernel[last]), shift(g.kernel[last]);
  for (int64_t k = 0; k < g.kernel[last]; ++k) {
    shift[k] = k * g.dilations[last] - g.pad_begin[last];
    lo[k] = std::max<int64_t>(0, ceil_div(-shift[k], stride_w));
    hi[k] = std::min<int64_t>(in_w, floor_div(out_w - 1 - shift[k], stride_w) + 1);
  }
  const auto tables = leading_dim_tables(g, /*forward=*/false);
  const std::vector<int64_t> lead_in(g.in.begin(), g.in.end() - 1);
  const std::vector<int64_t> out_strides = shape_strides(g.out);
  const int64_t lead_rows = product(lead_in);

  ctx.parallel_for(p.batch * p.out_channels, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> kidx(static_cast<size_t>(r)), iidx(static_cast<size_t>(r > 0 ? r - 1 : 0));
    for (int64_t nm = begin; nm < end; ++nm) {
      const int64_t n = nm / p.out_channels, m = nm % p.out_channels;
      const int64_t grp = m / m_per_group, m_local = m % m_per_group;
      A* yp = y + nm * out_plane;
      std::fill(yp, yp + out_plane, bias ? bias[m] : A(0));
      for (int64_t c = 0; c < c_per_group; ++c) {
        const int64_t ci = grp * c_per_group + c;
        const A* xp = x + (n * p.in_channels + ci) * in_plane;
        const A* wp = w + (ci * m_per_group + m_local) * k_numel;
        std::fill(kidx.begin(), kidx.end(), 0);
        for (int64_t kf = 0; kf < k_numel; ++kf, next_index(kidx, g.kernel)) {
          const A wv = wp[kf];
          const int64_t kl = kidx[last];
          const int64_t i_lo = lo[kl], i_hi = hi[kl];
          if (i_lo >= i_hi) continue;
          std::fill(iidx.begin(), iidx.end(), 0);
          for (int64_t row = 0; row < lead_rows; ++row, next_index(iidx, lead_in)) {
            int64_t out_off = 0;
            bool valid = true;
            for (int64_t d = 0; d < last; ++d) {
              const int64_t o = tables[d][kidx[d] * g.in[d] + iidx[d]];
              if (o < 0) {
                valid = false;
                break;
              }
              out_off += o * out_strides[d];
            }
            if (!valid) continue;
            const A* xr = xp + row * in_w;
            A* yr = yp + out_off + shift[kl];
            for (int64_t i = i_lo; i < i_hi; ++i) yr[i * stride_w] += wv * xr[i];
          }
        }
      }
    }
  });
}

}  // namespace parity::runtime::nn
