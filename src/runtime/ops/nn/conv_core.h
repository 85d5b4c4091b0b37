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

/// The window walk Conv and ConvTranspose share. One side of the window relation is iterated
/// (the output for Conv, the input for ConvTranspose) and the other reached from it: position j
/// along spatial dim d meets index j*stride - pad + k*dilation of the other side for kernel offset
/// k. The leading dims (all but the last) go through tables; the last dim is a contiguous run.
struct WindowWalk {
  WindowWalk(const WindowGeometry& g, bool iterate_output) : g_(g) {
    const std::vector<int64_t>& iterated = iterate_output ? g.out : g.in;
    const std::vector<int64_t>& other = iterate_output ? g.in : g.out;
    const int64_t last = g.rank - 1;
    for (int64_t d = 0; d < last; ++d) {
      std::vector<int64_t> t(static_cast<size_t>(g.kernel[d] * iterated[d]));
      for (int64_t k = 0; k < g.kernel[d]; ++k)
        for (int64_t j = 0; j < iterated[d]; ++j) {
          const int64_t v = j * g.strides[d] - g.pad_begin[d] + k * g.dilations[d];
          t[k * iterated[d] + j] = (v >= 0 && v < other[d]) ? v : -1;
        }
      tables_.push_back(std::move(t));
    }
    lead_.assign(iterated.begin(), iterated.end() - 1);
    other_strides_ = shape_strides(other);
    lead_rows = product(lead_);
    const int64_t stride = g.strides[last];
    lo.resize(g.kernel[last]);
    hi.resize(g.kernel[last]);
    shift.resize(g.kernel[last]);
    for (int64_t k = 0; k < g.kernel[last]; ++k) {
      shift[k] = k * g.dilations[last] - g.pad_begin[last];
      lo[k] = std::max<int64_t>(0, ceil_div(-shift[k], stride));
      hi[k] = std::min<int64_t>(iterated[last], floor_div(other[last] - 1 - shift[k], stride) + 1);
    }
  }

  /// Calls fn(kf, k_last, row, other_offset) for every kernel offset kf (flat, in weight order)
  /// whose last-dim run is not empty, and every row of the iterated side's leading dims that meets
  /// the other side: other_offset is where that row starts there, before shift[k_last]. Along the
  /// last dim, iterated positions [lo[k_last], hi[k_last]) meet other-side j*stride + shift[k_last].
  /// kidx and lidx are scratch of the spatial rank and one less.
  template <typename Fn>
  void for_each_row(std::vector<int64_t>& kidx, std::vector<int64_t>& lidx, Fn&& fn) const {
    const int64_t last = g_.rank - 1, k_numel = g_.kernel_numel();
    std::fill(kidx.begin(), kidx.end(), 0);
    for (int64_t kf = 0; kf < k_numel; ++kf, next_index(kidx, g_.kernel)) {
      const int64_t kl = kidx[last];
      if (lo[kl] >= hi[kl]) continue;
      std::fill(lidx.begin(), lidx.end(), 0);
      for (int64_t row = 0; row < lead_rows; ++row, next_index(lidx, lead_)) {
        int64_t offset = 0;
        bool valid = true;
        for (int64_t d = 0; d < last; ++d) {
          const int64_t i = tables_[d][kidx[d] * lead_[d] + lidx[d]];
          if (i < 0) {
            valid = false;
            break;
          }
          offset += i * other_strides_[d];
        }
        if (valid) fn(kf, kl, row, offset);
      }
    }
  }

  std::vector<int64_t> lo, hi, shift;  // per last-dim kernel offset
  int64_t lead_rows = 0;               // rows of the iterated side's leading dims

 private:
  const WindowGeometry& g_;
  std::vector<std::vector<int64_t>> tables_;  // per leading dim: [kernel offset][iterated position]
  std::vector<int64_t> lead_;
  std::vector<int64_t> other_strides_;
};

/// What Conv and ConvTranspose do once their geometry is known: check W's dtype and B's length,
/// then call direct(x, w, bias or null, y) on the data at the accumulation precision of X's dtype
/// (conv_forward or conv_transpose_forward) and store Y.
template <typename Direct>
void run_direct_conv(KernelContext& ctx, const ConvProblem& p, Direct&& direct) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
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
    direct(xv.data(), wv.data(), has_bias ? bv->data() : static_cast<const A*>(nullptr), y.data());
    y.finish();
  });
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
  const int64_t out_w = g.out[last], stride_w = g.strides[last];
  const WindowWalk walk(g, /*iterate_output=*/true);
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
        walk.for_each_row(kidx, oidx, [&](int64_t kf, int64_t kl, int64_t row, int64_t in_off) {
          const A wv = wp[kf];
          const int64_t o_lo = walk.lo[kl], o_hi = walk.hi[kl];
          A* yr = yp + row * out_w;
          const A* xr = xp + in_off + walk.shift[kl];
          if (stride_w == 1) {
            for (int64_t o = o_lo; o < o_hi; ++o) yr[o] += wv * xr[o];
          } else {
            for (int64_t o = o_lo; o < o_hi; ++o) yr[o] += wv * xr[o * stride_w];
          }
        });
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
  const int64_t in_w = g.in[last], stride_w = g.strides[last];
  const WindowWalk walk(g, /*iterate_output=*/false);

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
        walk.for_each_row(kidx, iidx, [&](int64_t kf, int64_t kl, int64_t row, int64_t out_off) {
          const A wv = wp[kf];
          const A* xr = xp + row * in_w;
          A* yr = yp + out_off + walk.shift[kl];
          for (int64_t i = walk.lo[kl]; i < walk.hi[kl]; ++i) yr[i * stride_w] += wv * xr[i];
        });
      }
    }
  });
}

}  // namespace parity::runtime::nn
