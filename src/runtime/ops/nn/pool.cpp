// Spec: https://onnx.ai/onnx/operators/onnx__AveragePool.html, onnx__MaxPool.html,
//       onnx__LpPool.html, onnx__GlobalAveragePool.html, onnx__GlobalMaxPool.html,
//       onnx__GlobalLpPool.html, onnx__MaxUnpool.html
// AveragePool, MaxPool, LpPool, GlobalAveragePool, GlobalMaxPool, GlobalLpPool, MaxUnpool.
//
// Every windowed pool walks each (batch, channel) plane; per spatial dim the valid input indices
// of each output position's window are precomputed once, so the per-element work is a table
// lookup.
#include <cmath>
#include <limits>

#include "runtime/ops/nn/nn_common.h"

namespace parity::runtime::nn {
namespace {

/// Per spatial dim and output index: the valid input indices of the window, plus the window
/// size counted with padding (for count_include_pad).
struct WindowTables {
  std::vector<std::vector<std::vector<int64_t>>> valid;  // [dim][out] -> input indices
  std::vector<std::vector<int64_t>> padded_count;        // [dim][out]
};

WindowTables make_window_tables(const WindowGeometry& g) {
  WindowTables t;
  t.valid.resize(g.rank);
  t.padded_count.resize(g.rank);
  for (int64_t d = 0; d < g.rank; ++d) {
    t.valid[d].resize(g.out[d]);
    t.padded_count[d].resize(g.out[d]);
    for (int64_t o = 0; o < g.out[d]; ++o) {
      const int64_t start = o * g.strides[d] - g.pad_begin[d];
      int64_t padded = 0;
      for (int64_t k = 0; k < g.kernel[d]; ++k) {
        const int64_t i = start + k * g.dilations[d];
        if (i < g.in[d] + g.pad_end[d]) ++padded;
        if (i >= 0 && i < g.in[d]) t.valid[d][o].push_back(i);
      }
      t.padded_count[d][o] = padded;
    }
  }
  return t;
}

/// Calls visit(flat input index within the plane) for each valid element of the window at the
/// output multi-index `out`. `extents` and `pos` are caller-owned scratch (no allocation here).
template <typename Visit>
void for_each_in_window(const WindowTables& t, const std::vector<int64_t>& in_strides, const std::vector<int64_t>& out,
                        std::vector<int64_t>& extents, std::vector<int64_t>& pos, Visit&& visit) {
  const size_t r = out.size();
  if (r == 2) {  // the common image case, without the odometer
    const auto& rows = t.valid[0][out[0]];
    const auto& cols = t.valid[1][out[1]];
    for (int64_t y : rows) {
      const int64_t base = y * in_strides[0];
      for (int64_t x : cols) visit(base + x);
    }
    return;
  }
  for (size_t d = 0; d < r; ++d) {
    extents[d] = static_cast<int64_t>(t.valid[d][out[d]].size());
    if (extents[d] == 0) return;
    pos[d] = 0;
  }
  do {
    int64_t off = 0;
    for (size_t d = 0; d < r; ++d) off += t.valid[d][out[d]][pos[d]] * in_strides[d];
    visit(off);
  } while (next_index(pos, extents));
}

enum class PoolKind { kAverage, kMax, kLp };

Shape pool_output_shape(const Shape& x, const WindowGeometry& g) {
  Shape s{x[0], x[1]};
  s.insert(s.end(), g.out.begin(), g.out.end());
  return s;
}

class WindowPoolKernel : public Kernel {
 public:
  /// MaxPool always had dilations; LpPool gained them (and ceil_mode) in 18, AveragePool in 19.
  static bool has_dilations(const KernelInit& init, PoolKind kind) {
    const int since = init.spec().since_version;
    return kind == PoolKind::kMax || (kind == PoolKind::kLp && since >= 18) || (kind == PoolKind::kAverage && since >= 19);
  }

  WindowPoolKernel(const KernelInit& init, PoolKind kind)
      : kind_(kind),
        attrs_(WindowAttrs::parse(init, /*has_dilations=*/has_dilations(init, kind),
                                  /*has_ceil_mode=*/kind != PoolKind::kLp || init.spec().since_version >= 18)) {
    if (attrs_.kernel_shape.empty()) init.fail("required attribute 'kernel_shape' is missing");
    count_include_pad_ = init.attr_int("count_include_pad", 0) != 0;
    storage_order_ = init.attr_int("storage_order", 0);
    if (kind == PoolKind::kLp) {
      const model::Attribute* p = init.find_attr("p");
      p_ = !p ? 2.0 : (p->type == model::AttrType::kFloat ? p->f : static_cast<double>(p->i));
    }
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() < 3) ctx.fail("input must have rank >= 3, got shape ", shape_to_string(x.shape()));
    if (static_cast<int64_t>(attrs_.kernel_shape.size()) != x.rank() - 2)
      ctx.fail("kernel_shape has ", attrs_.kernel_shape.size(), " dims but the input has ", x.rank() - 2,
               " spatial dims");
    const std::vector<int64_t> in_spatial(x.shape().begin() + 2, x.shape().end());
    const WindowGeometry g = resolve_window(attrs_, in_spatial, attrs_.kernel_shape, ctx);
    const Shape out_shape = pool_output_shape(x.shape(), g);
    if (kind_ == PoolKind::kMax) {
      // Max needs no arithmetic: double holds every supported dtype (float, half, int8, uint8) exactly.
      run<double>(ctx, x, g, out_shape);
    } else {
      visit_float_compute(x.dtype(), ctx, [&](auto tag) { run<typename decltype(tag)::type>(ctx, x, g, out_shape); });
    }
  }

 private:
  template <typename A>
  void run(KernelContext& ctx, const Tensor& x, const WindowGeometry& g, const Shape& out_shape) const {
    if (kind_ == PoolKind::kMax && !is_floating(x.dtype()) && x.dtype() != DType::kInt8 && x.dtype() != DType::kUInt8)
      ctx.fail("unsupported input dtype ", dtype_name(x.dtype()));
    AccInput<A> xv(x);
    AccOutput<A> y(ctx, 0, x.dtype(), out_shape);
    const bool want_indices = kind_ == PoolKind::kMax && ctx.has_output(1);
    Tensor* indices = want_indices ? &ctx.allocate_output(1, DType::kInt64, out_shape) : nullptr;
    const WindowTables tables = make_window_tables(g);
    const std::vector<int64_t> in_strides = shape_strides(g.in);
    // Column-major strides for storage_order=1 indices.
    std::vector<int64_t> col_strides(g.rank, 1);
    for (int64_t d = 1; d < g.rank; ++d) col_strides[d] = col_strides[d - 1] * g.in[d - 1];
    const int64_t in_plane = g.in_numel(), out_plane = g.out_numel();
    const int64_t planes = x.dim(0) * x.dim(1);
    ctx.parallel_for(planes, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> out_idx(g.rank), extents(g.rank), pos(g.rank);
      for (int64_t plane = begin; plane < end; ++plane) {
        const A* xp = xv.data() + plane * in_plane;
        A* yp = y.data() + plane * out_plane;
        std::fill(out_idx.begin(), out_idx.end(), 0);
        for (int64_t o = 0; o < out_plane; ++o, next_index(out_idx, g.out)) {
          switch (kind_) {
            case PoolKind::kAverage: {
              A sum = 0;
              int64_t count = 0;
              for_each_in_window(tables, in_strides, out_idx, extents, pos, [&](int64_t off) {
                sum += xp[off];
                ++count;
              });
              if (count_include_pad_) {
                count = 1;
                for (int64_t d = 0; d < g.rank; ++d) count *= tables.padded_count[d][out_idx[d]];
              }
              yp[o] = count > 0 ? sum / static_cast<A>(count) : A(0);
              break;
            }
            case PoolKind::kLp: {
              A sum = 0;
              for_each_in_window(tables, in_strides, out_idx, extents, pos,
                                 [&](int64_t off) { sum += static_cast<A>(std::pow(std::abs(xp[off]), p_)); });
              yp[o] = static_cast<A>(std::pow(sum, 1.0 / p_));
              break;
            }
            case PoolKind::kMax: {
              A best = -std::numeric_limits<A>::infinity();
              int64_t best_off = -1;
              for_each_in_window(tables, in_strides, out_idx, extents, pos, [&](int64_t off) {
                if (best_off < 0 || xp[off] > best) {
                  best = xp[off];
                  best_off = off;
                }
              });
              yp[o] = best;
              if (indices) {
                int64_t idx = best_off;
                if (storage_order_ == 1 && best_off >= 0) {
                  idx = 0;
                  int64_t rem = best_off;
                  for (int64_t d = 0; d < g.rank; ++d) {
                    idx += (rem / in_strides[d]) * col_strides[d];
                    rem %= in_strides[d];
                  }
                }
                indices->data<int64_t>()[plane * out_plane + o] = plane * in_plane + idx;
              }
              break;
            }
          }
        }
      }
    });
    y.finish();
  }

  PoolKind kind_;
  WindowAttrs attrs_;
  bool count_include_pad_ = false;
  int64_t storage_order_ = 0;
  double p_ = 2.0;
};

struct AveragePoolKernel : WindowPoolKernel {
  explicit AveragePoolKernel(const KernelInit& init) : WindowPoolKernel(init, PoolKind::kAverage) {}
};
struct MaxPoolKernel : WindowPoolKernel {
  explicit MaxPoolKernel(const KernelInit& init) : WindowPoolKernel(init, PoolKind::kMax) {}
};
struct LpPoolKernel : WindowPoolKernel {
  explicit LpPoolKernel(const KernelInit& init) : WindowPoolKernel(init, PoolKind::kLp) {}
};

class GlobalPoolKernel : public Kernel {
 public:
  GlobalPoolKernel(const KernelInit& init, PoolKind kind) : kind_(kind) {
    if (kind == PoolKind::kLp) {
      const model::Attribute* p = init.find_attr("p");
      p_ = !p ? 2.0 : (p->type == model::AttrType::kFloat ? p->f : static_cast<double>(p->i));
    }
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() < 2) ctx.fail("input must have rank >= 2, got shape ", shape_to_string(x.shape()));
    Shape out_shape{x.dim(0), x.dim(1)};
    out_shape.resize(x.rank(), 1);
    visit_float_compute(x.dtype(), ctx, [&](auto tag) {
      using A = typename decltype(tag)::type;
      AccInput<A> xv(x);
      AccOutput<A> y(ctx, 0, x.dtype(), out_shape);
      const int64_t planes = x.dim(0) * x.dim(1);
      const int64_t plane_size = planes == 0 ? 0 : x.numel() / planes;
      ctx.parallel_for(planes, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
          const A* xp = xv.data() + p * plane_size;
          A acc = kind_ == PoolKind::kMax ? -std::numeric_limits<A>::infinity() : A(0);
          for (int64_t i = 0; i < plane_size; ++i) {
            switch (kind_) {
              case PoolKind::kAverage: acc += xp[i]; break;
              case PoolKind::kMax: acc = std::max(acc, xp[i]); break;
              case PoolKind::kLp: acc += static_cast<A>(std::pow(std::abs(xp[i]), p_)); break;
            }
          }
          if (kind_ == PoolKind::kAverage) acc /= static_cast<A>(plane_size);
          if (kind_ == PoolKind::kLp) acc = static_cast<A>(std::pow(acc, 1.0 / p_));
          y[p] = acc;
        }
      });
      y.finish();
    });
  }

 private:
  PoolKind kind_;
  double p_ = 2.0;
};

struct GlobalAveragePoolKernel : GlobalPoolKernel {
  explicit GlobalAveragePoolKernel(const KernelInit& init) : GlobalPoolKernel(init, PoolKind::kAverage) {}
};
struct GlobalMaxPoolKernel : GlobalPoolKernel {
  explicit GlobalMaxPoolKernel(const KernelInit& init) : GlobalPoolKernel(init, PoolKind::kMax) {}
};
struct GlobalLpPoolKernel : GlobalPoolKernel {
  explicit GlobalLpPoolKernel(const KernelInit& init) : GlobalPoolKernel(init, PoolKind::kLp) {}
};

/// Scatters X into a zero tensor at the flat positions given by I (MaxPool's Indices output).
class MaxUnpoolKernel : public Kernel {
 public:
  explicit MaxUnpoolKernel(const KernelInit& init)
      : attrs_(WindowAttrs::parse(init, /*has_dilations=*/false, /*has_ceil_mode=*/false)) {
    if (attrs_.kernel_shape.empty()) init.fail("required attribute 'kernel_shape' is missing");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& ind = ctx.input(1);
    if (x.rank() < 3) ctx.fail("input must have rank >= 3");
    if (ind.shape() != x.shape()) ctx.fail("indices shape ", shape_to_string(ind.shape()), " != X shape");
    const size_t r = static_cast<size_t>(x.rank() - 2);
    if (attrs_.kernel_shape.size() != r) ctx.fail("kernel_shape has ", attrs_.kernel_shape.size(), " dims");
    // Indices address the shape MaxPool's input had (the inferred shape); an explicit
    // output_shape only adds room, so each index is re-laid out by its multi-index.
    Shape inferred{x.dim(0), x.dim(1)};
    for (size_t d = 0; d < r; ++d) {
      const int64_t s = attrs_.strides.empty() ? 1 : attrs_.strides.at(d);
      const int64_t pb = attrs_.pads.empty() ? 0 : attrs_.pads.at(d);
      const int64_t pe = attrs_.pads.empty() ? 0 : attrs_.pads.at(d + r);
      inferred.push_back((x.dim(d + 2) - 1) * s - pb - pe + attrs_.kernel_shape[d]);
    }
    Shape out_shape = inferred;
    if (ctx.has_input(2)) {
      out_shape = read_int64s(ctx.input(2));
      if (out_shape.size() != x.shape().size()) ctx.fail("output_shape has ", out_shape.size(), " values");
    }
    std::vector<int64_t> idx = read_int64s(ind);
    if (out_shape != inferred) {
      const std::vector<int64_t> from = shape_strides(inferred), to = shape_strides(out_shape);
      for (auto& v : idx) {
        if (v < 0 || v >= shape_numel(inferred)) ctx.fail("index ", v, " is outside the pooled input");
        int64_t rem = v, mapped = 0;
        for (size_t d = 0; d < from.size(); ++d) {
          const int64_t i = rem / from[d];
          rem %= from[d];
          if (i >= out_shape[d]) ctx.fail("index ", v, " does not fit output_shape ", shape_to_string(out_shape));
          mapped += i * to[d];
        }
        v = mapped;
      }
    }
    visit_float_compute(x.dtype(), ctx, [&](auto tag) {
      using A = typename decltype(tag)::type;
      AccInput<A> xv(x);
      AccOutput<A> y(ctx, 0, x.dtype(), out_shape);
      for (int64_t i = 0; i < x.numel(); ++i) {
        if (idx[i] < 0 || idx[i] >= y.numel()) ctx.fail("index ", idx[i], " is outside the output");
        y[idx[i]] = xv[i];
      }
      y.finish();
    });
  }

 private:
  WindowAttrs attrs_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "AveragePool", (1, 7, 10, 11, 19), AveragePoolKernel);
PARITY_REGISTER_KERNEL("", "MaxPool", (1, 8, 10, 11, 12), MaxPoolKernel);
PARITY_REGISTER_KERNEL("", "LpPool", (1, 2, 11, 18), LpPoolKernel);
PARITY_REGISTER_KERNEL("", "GlobalAveragePool", 1, GlobalAveragePoolKernel);
PARITY_REGISTER_KERNEL("", "GlobalMaxPool", 1, GlobalMaxPoolKernel);
PARITY_REGISTER_KERNEL("", "GlobalLpPool", (1, 2), GlobalLpPoolKernel);
PARITY_REGISTER_KERNEL("", "MaxUnpool", (9, 11), MaxUnpoolKernel);

}  // namespace parity::runtime::nn
