// Spec: https://onnx.ai/onnx/operators/onnx__BatchNormalization.html,
//       onnx__InstanceNormalization.html, onnx__LayerNormalization.html,
//       onnx__RMSNormalization.html, onnx__GroupNormalization.html, onnx__LpNormalization.html,
//       onnx__LRN.html, onnx__MeanVarianceNormalization.html
// BatchNormalization, InstanceNormalization, LayerNormalization, RMSNormalization,
// GroupNormalization, LpNormalization, LRN, MeanVarianceNormalization.
#include <cmath>

#include "runtime/ops/common/axis.h"
#include "runtime/ops/nn/nn_common.h"

namespace parity::runtime::nn {
namespace {
/// Inference uses the running statistics; training_mode (opset 14+) normalizes with the batch
/// statistics and also returns the updated running mean and variance.
class BatchNormalizationKernel : public Kernel {
 public:
  explicit BatchNormalizationKernel(const KernelInit& init)
      : epsilon_(init.attr_float("epsilon", 1e-5f)),
        momentum_(init.attr_float("momentum", 0.9f)),
        training_(init.opset() >= 14 && init.attr_int("training_mode", 0) != 0) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() < 2) ctx.fail("input must have rank >= 2, got shape ", shape_to_string(x.shape()));
    const int64_t n = x.dim(0), c = x.dim(1);
    const int64_t spatial = c == 0 || n == 0 ? 0 : x.numel() / (n * c);
    // Per channel, or (opset < 9 with spatial=0) per element of a [C, spatial...] block.
    const int64_t param_count = ctx.input(1).numel();
    const bool per_element = param_count != c && param_count == c * spatial;
    if (!per_element && param_count != c) ctx.fail("scale has ", param_count, " values, expected ", c);
    for (size_t i = 2; i <= 4; ++i)
      if (ctx.input(i).numel() != param_count) ctx.fail("input ", i, " has ", ctx.input(i).numel(), " values");
    visit_float_compute(x.dtype(), ctx, [&](auto tag) {
      using A = typename decltype(tag)::type;
      AccInput<A> xv(x);
      std::vector<A> scale = load_as<A>(ctx.input(1)), bias = load_as<A>(ctx.input(2));
      std::vector<A> mean = load_as<A>(ctx.input(3)), var = load_as<A>(ctx.input(4));
      std::vector<A> use_mean = mean, use_var = var;
      if (training_ && !per_element) {
        for (int64_t ch = 0; ch < c; ++ch) {
          double sum = 0, sq = 0;
          for (int64_t b = 0; b < n; ++b) {
            const A* p = xv.data() + (b * c + ch) * spatial;
            for (int64_t i = 0; i < spatial; ++i) sum += p[i];
          }
          const double count = static_cast<double>(n * spatial);
          const double m = sum / count;
          for (int64_t b = 0; b < n; ++b) {
            const A* p = xv.data() + (b * c + ch) * spatial;
            for (int64_t i = 0; i < spatial; ++i) sq += (p[i] - m) * (p[i] - m);
          }
          use_mean[ch] = static_cast<A>(m);
          use_var[ch] = static_cast<A>(sq / count);
        }
      }
      AccOutput<A> y(ctx, 0, x.dtype(), x.shape());
      ctx.parallel_for(n * c, [&](int64_t begin, int64_t end) {
        for (int64_t bc = begin; bc < end; ++bc) {
          const int64_t ch = bc % c;
          const A* xp = xv.data() + bc * spatial;
          A* yp = y.data() + bc * spatial;
          if (per_element) {
            for (int64_t i = 0; i < spatial; ++i) {
              const int64_t k = ch * spatial + i;
              yp[i] = (xp[i] - use_mean[k]) / std::sqrt(use_var[k] + static_cast<A>(epsilon_)) * scale[k] + bias[k];
            }
          } else {
            const A a = scale[ch] / std::sqrt(use_var[ch] + static_cast<A>(epsilon_));
            const A b = bias[ch] - use_mean[ch] * a;
            for (int64_t i = 0; i < spatial; ++i) yp[i] = xp[i] * a + b;
          }
        }
      });
      y.finish();
      if (training_) {
        std::vector<A> running_mean(mean.size()), running_var(var.size());
        for (size_t k = 0; k < mean.size(); ++k) {
          running_mean[k] = mean[k] * static_cast<A>(momentum_) + use_mean[k] * static_cast<A>(1 - momentum_);
          running_var[k] = var[k] * static_cast<A>(momentum_) + use_var[k] * static_cast<A>(1 - momentum_);
        }
        emit_output(ctx, 1, ctx.input(3).dtype(), ctx.input(3).shape(), running_mean);
        emit_output(ctx, 2, ctx.input(4).dtype(), ctx.input(4).shape(), running_var);
      }
    });
  }

 private:
  float epsilon_, momentum_;
  bool training_;
};
class InstanceNormalizationKernel : public Kernel {
 public:
  explicit InstanceNormalizationKernel(const KernelInit& init) : epsilon_(init.attr_float("epsilon", 1e-5f)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() < 2) ctx.fail("input must have rank >= 2");
    const int64_t n = x.dim(0), c = x.dim(1);
    const int64_t spatial = c == 0 || n == 0 ? 0 : x.numel() / (n * c);
    if (ctx.input(1).numel() != c || ctx.input(2).numel() != c) ctx.fail("scale and B must have ", c, " values");
    visit_float_compute(x.dtype(), ctx, [&](auto tag) {
      using A = typename decltype(tag)::type;
      AccInput<A> xv(x);
      const std::vector<A> scale = load_as<A>(ctx.input(1)), bias = load_as<A>(ctx.input(2));
      AccOutput<A> y(ctx, 0, x.dtype(), x.shape());
      ctx.parallel_for(n * c, [&](int64_t begin, int64_t end) {
        for (int64_t bc = begin; bc < end; ++bc) {
          const int64_t ch = bc % c;
          const A* xp = xv.data() + bc * spatial;
          A* yp = y.data() + bc * spatial;
          double sum = 0, sq = 0;
          for (int64_t i = 0; i < spatial; ++i) sum += xp[i];
          const double mean = sum / static_cast<double>(spatial);
          for (int64_t i = 0; i < spatial; ++i) sq += (xp[i] - mean) * (xp[i] - mean);
          const double var = sq / static_cast<double>(spatial);
          const A a = static_cast<A>(scale[ch] / std::sqrt(var + epsilon_));
          const A b = static_cast<A>(bias[ch] - mean * a);
          for (int64_t i = 0; i < spatial; ++i) yp[i] = xp[i] * a + b;
        }
      });
      y.finish();
    });
  }

 private:
  float epsilon_;
};

/// Maps a flat index in a block of shape `block` to the flat index in `param` broadcast to it
/// (numpy rules, right-aligned).
std::vector<int64_t> broadcast_index_map(const Shape& block, const Shape& param, const KernelContext& ctx,
                                         const char* what) {
  if (param.size() > block.size()) ctx.fail(what, " has rank ", param.size(), ", more than the normalized shape");
  const size_t off = block.size() - param.size();
  for (size_t d = 0; d < param.size(); ++d)
    if (param[d] != 1 && param[d] != block[off + d])
      ctx.fail(what, " shape ", shape_to_string(param), " does not broadcast to ", shape_to_string(block));
  const std::vector<int64_t> pstrides = shape_strides(param);
  std::vector<int64_t> map(static_cast<size_t>(shape_numel(block)));
  std::vector<int64_t> idx(block.size(), 0);
  for (size_t k = 0; k < map.size(); ++k, next_index(idx, block)) {
    int64_t p = 0;
    for (size_t d = 0; d < param.size(); ++d)
      if (param[d] != 1) p += idx[off + d] * pstrides[d];
    map[k] = p;
  }
  return map;
}
class LayerNormalizationKernel : public Kernel {
 public:
  explicit LayerNormalizationKernel(const KernelInit& init)
      : axis_(init.attr_int("axis", -1)),
        epsilon_(init.attr_float("epsilon", 1e-5f)),
        stash_type_(init.attr_int("stash_type", 1)),
        precision_(init.precision()) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t axis = ops::normalize_axis(axis_, x.rank(), ctx);
    const Shape block(x.shape().begin() + axis, x.shape().end());
    const int64_t inner = shape_numel(block);
    const int64_t outer = inner == 0 ? 0 : x.numel() / inner;
    const std::vector<int64_t> scale_map = broadcast_index_map(block, ctx.input(1).shape(), ctx, "Scale");
    std::vector<int64_t> bias_map;
    if (ctx.has_input(2)) bias_map = broadcast_index_map(block, ctx.input(2).shape(), ctx, "B");
    Shape stat_shape = x.shape();
    for (int64_t d = axis; d < x.rank(); ++d) stat_shape[d] = 1;
    const DType stat_dtype = stash_type_ == 1 ? compute_dtype(DType::kFloat32, precision_) : x.dtype();
    visit_float_compute(x.dtype(), ctx, [&](auto tag) {
      using A = typename decltype(tag)::type;
      AccInput<A> xv(x);
      const std::vector<A> scale = load_as<A>(ctx.input(1));
      std::vector<A> bias;
      if (ctx.has_input(2)) bias = load_as<A>(ctx.input(2));
      AccOutput<A> y(ctx, 0, x.dtype(), x.shape());
      std::vector<A> means(static_cast<size_t>(outer)), inv_std(static_cast<size_t>(outer));
      ctx.parallel_for(outer, [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
          const A* xp = xv.data() + o * inner;
          A* yp = y.data() + o * inner;
          A sum = 0;
          for (int64_t i = 0; i < inner; ++i) sum += xp[i];
          const A mean = sum / static_cast<A>(inner);
          A sq = 0;
          for (int64_t i = 0; i < inner; ++i) sq += (xp[i] - mean) * (xp[i] - mean);
          const A inv = A(1) / std::sqrt(sq / static_cast<A>(inner) + static_cast<A>(epsilon_));
          means[o] = mean;
          inv_std[o] = inv;
          for (int64_t i = 0; i < inner; ++i) {
            A v = (xp[i] - mean) * inv * scale[scale_map[i]];
            if (!bias.empty()) v += bias[bias_map[i]];
            yp[i] = v;
          }
        }
      });
      y.finish();
      emit_output(ctx, 1, stat_dtype, stat_shape, means);
      emit_output(ctx, 2, stat_dtype, stat_shape, inv_std);
    });
  }

 private:
  int64_t axis_;
  float epsilon_;
  int64_t stash_type_;
  Precision precision_;
};

/// https://onnx.ai/onnx/operators/onnx__RMSNormalization.html (opset 23): X scaled by the inverse
/// root mean square over the axes from `axis` on, times Scale (broadcast to those axes).
class RmsNormalizationKernel : public Kernel {
 public:
  explicit RmsNormalizationKernel(const KernelInit& init)
      : axis_(init.attr_int("axis", -1)), epsilon_(init.attr_float("epsilon", 1e-5f)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t axis = ops::normalize_axis(axis_, x.rank(), ctx);
    const Shape block(x.shape().begin() + axis, x.shape().end());
    const int64_t inner = shape_numel(block);
    const int64_t outer = inner == 0 ? 0 : x.numel() / inner;
    const std::vector<int64_t> scale_map = broadcast_index_map(block, ctx.input(1).shape(), ctx, "scale");
    visit_float_compute(x.dtype(), ctx, [&](auto tag) {
      using A = typename decltype(tag)::type;
      AccInput<A> xv(x);
      const std::vector<A> scale = load_as<A>(ctx.input(1));
      AccOutput<A> y(ctx, 0, x.dtype(), x.shape());
      ctx.parallel_for(outer, [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
          const A* xp = xv.data() + o * inner;
          A* yp = y.data() + o * inner;
          A sq = 0;
          for (int64_t i = 0; i < inner; ++i) sq += xp[i] * xp[i];
          const A inv = A(1) / std::sqrt(sq / static_cast<A>(inner) + static_cast<A>(epsilon_));
          for (int64_t i = 0; i < inner; ++i) yp[i] = xp[i] * inv * scale[scale_map[i]];
        }
      });
      y.finish();
    });
  }

 private:
  int64_t axis_;
  float epsilon_;
};

/// https://onnx.ai/onnx/operators/onnx__GroupNormalization.html: the channels of X [N, C, ...]
/// split into num_groups groups, each normalized over its channels and spatial elements. Opset 18
/// takes scale and bias per group; opset 21 per channel.
class GroupNormalizationKernel : public Kernel {
 public:
  explicit GroupNormalizationKernel(const KernelInit& init)
      : num_groups_(init.attr_int("num_groups")),
        epsilon_(init.attr_float("epsilon", 1e-5f)),
        per_channel_(init.spec().since_version >= 21) {
    if (num_groups_ <= 0) init.fail("num_groups must be positive, got ", num_groups_);
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() < 2) ctx.fail("X must have at least 2 dimensions [N, C, ...], got ", shape_to_string(x.shape()));
    const int64_t n = x.shape()[0], channels = x.shape()[1];
    if (channels % num_groups_ != 0) ctx.fail(channels, " channels do not split into ", num_groups_, " groups");
    const int64_t spatial = channels == 0 ? 0 : x.numel() / (n * channels);
    const int64_t per_group = channels / num_groups_;
    const int64_t params = per_channel_ ? channels : num_groups_;
    for (size_t i : {size_t{1}, size_t{2}})
      if (ctx.input(i).numel() != params)
        ctx.fail(i == 1 ? "scale" : "bias", " must have ", params, per_channel_ ? " values (one per channel)" : " values (one per group)",
                 ", got shape ", shape_to_string(ctx.input(i).shape()));
    visit_float_compute(x.dtype(), ctx, [&](auto tag) {
      using A = typename decltype(tag)::type;
      AccInput<A> xv(x);
      const std::vector<A> scale = load_as<A>(ctx.input(1)), bias = load_as<A>(ctx.input(2));
      AccOutput<A> y(ctx, 0, x.dtype(), x.shape());
      const int64_t group_size = per_group * spatial;
      ctx.parallel_for(n * num_groups_, [&](int64_t begin, int64_t end) {
        for (int64_t ng = begin; ng < end; ++ng) {
          const A* xp = xv.data() + ng * group_size;
          A* yp = y.data() + ng * group_size;
          A sum = 0;
          for (int64_t i = 0; i < group_size; ++i) sum += xp[i];
          const A mean = group_size == 0 ? A(0) : sum / static_cast<A>(group_size);
          A sq = 0;
          for (int64_t i = 0; i < group_size; ++i) sq += (xp[i] - mean) * (xp[i] - mean);
          const A inv = A(1) / std::sqrt((group_size == 0 ? A(0) : sq / static_cast<A>(group_size)) +
                                         static_cast<A>(epsilon_));
          const int64_t g = ng % num_groups_;
          for (int64_t c = 0; c < per_group; ++c) {
            const int64_t p = per_channel_ ? g * per_group + c : g;
            for (int64_t s = 0; s < spatial; ++s) {
              const int64_t i = c * spatial + s;
              yp[i] = (xp[i] - mean) * inv * scale[p] + bias[p];
            }
          }
        }
      });
      y.finish();
    });
  }

 private:
  int64_t num_groups_;
  float epsilon_;
  bool per_channel_;
};

/// Iterates a tensor as [outer, axis_len, inner] blocks.
struct AxisSplit {
  int64_t outer = 1, len = 1, inner = 1;
  AxisSplit(const Shape& s, int64_t axis) {
    for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d) {
      if (d < axis) outer *= s[d];
      else if (d == axis) len = s[d];
      else inner *= s[d];
    }
  }
};
class LpNormalizationKernel : public Kernel {
 public:
  explicit LpNormalizationKernel(const KernelInit& init) : axis_(init.attr_int("axis", -1)), p_(init.attr_int("p", 2)) {
    if (p_ != 1 && p_ != 2) init.fail("p must be 1 or 2, got ", p_);
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t axis = ops::normalize_axis(axis_, x.rank(), ctx);
    const AxisSplit sp(x.shape(), axis);
    visit_float_compute(x.dtype(), ctx, [&](auto tag) {
      using A = typename decltype(tag)::type;
      AccInput<A> xv(x);
      AccOutput<A> y(ctx, 0, x.dtype(), x.shape());
      for (int64_t o = 0; o < sp.outer; ++o)
        for (int64_t i = 0; i < sp.inner; ++i) {
          const int64_t base = o * sp.len * sp.inner + i;
          A norm = 0;
          for (int64_t k = 0; k < sp.len; ++k) {
            const A v = xv[base + k * sp.inner];
            norm += p_ == 1 ? std::abs(v) : v * v;
          }
          if (p_ == 2) norm = std::sqrt(norm);
          for (int64_t k = 0; k < sp.len; ++k)
            y[base + k * sp.inner] = norm == A(0) ? A(0) : xv[base + k * sp.inner] / norm;
        }
      y.finish();
    });
  }

 private:
  int64_t axis_, p_;
};
class LrnKernel : public Kernel {
 public:
  explicit LrnKernel(const KernelInit& init)
      : size_(init.attr_int("size")),
        alpha_(init.attr_float("alpha", 1e-4f)),
        beta_(init.attr_float("beta", 0.75f)),
        bias_(init.attr_float("bias", 1.0f)) {
    if (size_ <= 0) init.fail("size must be positive");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() < 2) ctx.fail("input must have rank >= 2");
    const AxisSplit sp(x.shape(), 1);
    const int64_t before = (size_ - 1) / 2, after = size_ - 1 - before;
    visit_float_compute(x.dtype(), ctx, [&](auto tag) {
      using A = typename decltype(tag)::type;
      AccInput<A> xv(x);
      AccOutput<A> y(ctx, 0, x.dtype(), x.shape());
      for (int64_t n = 0; n < sp.outer; ++n)
        for (int64_t c = 0; c < sp.len; ++c)
          for (int64_t i = 0; i < sp.inner; ++i) {
            A sq = 0;
            for (int64_t cc = std::max<int64_t>(0, c - before); cc <= std::min(sp.len - 1, c + after); ++cc) {
              const A v = xv[(n * sp.len + cc) * sp.inner + i];
              sq += v * v;
            }
            const int64_t k = (n * sp.len + c) * sp.inner + i;
            y[k] = xv[k] / static_cast<A>(std::pow(bias_ + alpha_ / size_ * sq, static_cast<A>(beta_)));
          }
      y.finish();
    });
  }

 private:
  int64_t size_;
  float alpha_, beta_, bias_;
};
/// Follows the function body: (X - E[X]) / (sqrt(E[X^2] - E[X]^2) + 1e-9).
class MeanVarianceNormalizationKernel : public Kernel {
 public:
  explicit MeanVarianceNormalizationKernel(const KernelInit& init) : axes_(init.attr_ints("axes", {0, 2, 3})) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    std::vector<bool> reduced(static_cast<size_t>(rank), false);
    for (int64_t a : axes_) reduced[ops::normalize_axis(a, rank, ctx)] = true;
    // Group index of each element = its index with the reduced axes dropped.
    Shape kept;
    for (int64_t d = 0; d < rank; ++d)
      if (!reduced[d]) kept.push_back(x.dim(d));
    const int64_t groups = shape_numel(kept);
    std::vector<int64_t> group_of(static_cast<size_t>(x.numel()));
    {
      std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
      const std::vector<int64_t> kstrides = shape_strides(kept);
      for (int64_t k = 0; k < x.numel(); ++k, next_index(idx, x.shape())) {
        int64_t g = 0, kd = 0;
        for (int64_t d = 0; d < rank; ++d)
          if (!reduced[d]) g += idx[d] * kstrides[kd++];
        group_of[k] = g;
      }
    }
    visit_float_compute(x.dtype(), ctx, [&](auto tag) {
      using A = typename decltype(tag)::type;
      AccInput<A> xv(x);
      std::vector<double> sum(static_cast<size_t>(groups), 0.0), sq(static_cast<size_t>(groups), 0.0);
      std::vector<int64_t> count(static_cast<size_t>(groups), 0);
      for (int64_t k = 0; k < x.numel(); ++k) {
        const double v = xv[k];
        sum[group_of[k]] += v;
        sq[group_of[k]] += v * v;
        ++count[group_of[k]];
      }
      AccOutput<A> y(ctx, 0, x.dtype(), x.shape());
      for (int64_t k = 0; k < x.numel(); ++k) {
        const int64_t g = group_of[k];
        const double mean = sum[g] / count[g];
        const double var = std::max(0.0, sq[g] / count[g] - mean * mean);
        y[k] = static_cast<A>((xv[k] - mean) / (std::sqrt(var) + 1e-9));
      }
      y.finish();
    });
  }

 private:
  std::vector<int64_t> axes_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "BatchNormalization", (1, 6, 7, 9, 14, 15), BatchNormalizationKernel);
PARITY_REGISTER_KERNEL("", "InstanceNormalization", (1, 6), InstanceNormalizationKernel);
PARITY_REGISTER_KERNEL("", "LayerNormalization", 17, LayerNormalizationKernel);
PARITY_REGISTER_KERNEL("", "RMSNormalization", 23, RmsNormalizationKernel);
PARITY_REGISTER_KERNEL("", "GroupNormalization", (18, 21), GroupNormalizationKernel);
PARITY_REGISTER_KERNEL("", "LpNormalization", 1, LpNormalizationKernel);
PARITY_REGISTER_KERNEL("", "LRN", (1, 13), LrnKernel);
PARITY_REGISTER_KERNEL("", "MeanVarianceNormalization", (9, 13), MeanVarianceNormalizationKernel);

}  // namespace parity::runtime::nn
