// Spec: https://onnx.ai/onnx/operators/onnx__RandomNormal.html, onnx__RandomUniform.html,
//       onnx__RandomNormalLike.html, onnx__RandomUniformLike.html, onnx__Bernoulli.html,
//       onnx__Multinomial.html
// Random generators: RandomNormal, RandomUniform, RandomNormalLike, RandomUniformLike, Bernoulli,
// Multinomial.
// Values come from a 64-bit Mersenne Twister seeded with the 'seed' attribute (the same values on
// every run) or, without one, with the executor's per-run seed (KernelContext::next_random_seed).
// Uniform doubles and the Box-Muller normal transform are computed here, not by <random>'s
// distributions, so results are identical across standard libraries. They do not reproduce
// numpy's stream: backend tests can only check these outputs' dtypes and shapes.
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <optional>
#include <random>
#include <vector>

#include "runtime/ops/common/axis.h"
#include "runtime/ops/common/dispatch.h"
#include "runtime/ops/common/elementwise.h"

namespace parity::runtime::ops {
namespace {

class Generator {
 public:
  explicit Generator(uint64_t seed) : engine_(seed) {}
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * (1.0 / 9007199254740992.0); }
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u1;
    do {
      u1 = uniform();
    } while (u1 <= 0.0);
    const double u2 = uniform();
    const double radius = std::sqrt(-2.0 * std::log(u1));
    spare_ = radius * std::sin(2.0 * std::numbers::pi * u2);
    has_spare_ = true;
    return radius * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  std::mt19937_64 engine_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

/// The optional float 'seed' attribute, kept as its bit pattern so every distinct seed differs.
struct SeedAttr {
  explicit SeedAttr(const KernelInit& init) {
    if (init.has_attr("seed")) {
      const float f = init.attr_float("seed");
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof(bits));
      seed = bits;
    }
  }
  Generator make(KernelContext& ctx) const { return Generator(seed ? *seed : ctx.next_random_seed()); }
  std::optional<uint64_t> seed;
};

/// Resolves a 'dtype' attribute (ONNX TensorProto code) or falls back; float dtypes follow the
/// executor's precision (fp64 oracle mode computes in double).
DType dtype_attr(const KernelInit& init, DType fallback) {
  DType d = fallback;
  if (init.has_attr("dtype")) d = static_cast<DType>(init.attr_int("dtype"));
  if (!is_floating(d) && d != DType::kUndefined) init.fail("attribute 'dtype' must be a floating type, got ", dtype_name(d));
  return d == DType::kUndefined ? d : compute_dtype(d, init.precision());
}

template <typename Draw>
void fill(KernelContext& ctx, DType dtype, const Shape& shape, Draw&& draw) {
  dispatch_dtype<FloatTypes>(dtype, ctx, [&](auto tag) {
    using T = typename decltype(tag)::type;
    Tensor& out = ctx.allocate_output(0, dtype, shape);
    T* p = out.data<T>();
    for (int64_t i = 0; i < out.numel(); ++i) p[i] = convert_scalar<T>(draw(i));
  });
}

enum class Distribution { kNormal, kUniform };

template <Distribution kDist, bool kLike>
class RandomKernel final : public Kernel {
 public:
  explicit RandomKernel(const KernelInit& init)
      : seed_(init), dtype_(dtype_attr(init, kLike ? DType::kUndefined : DType::kFloat32)) {
    if constexpr (kDist == Distribution::kNormal) {
      a_ = init.attr_float("mean", 0.0f);
      b_ = init.attr_float("scale", 1.0f);
    } else {
      a_ = init.attr_float("low", 0.0f);
      b_ = init.attr_float("high", 1.0f);
    }
    if constexpr (!kLike) {
      shape_ = init.attr_ints("shape");
      for (int64_t d : shape_)
        if (d < 0) init.fail("attribute 'shape' has a negative dimension ", d);
    }
  }
  void compute(KernelContext& ctx) const override {
    Shape shape = shape_;
    DType dtype = dtype_;
    if constexpr (kLike) {
      const Tensor& like = ctx.input(0);
      shape = like.shape();
      if (dtype == DType::kUndefined) dtype = compute_dtype(like.dtype(), ctx.precision());
    }
    Generator gen = seed_.make(ctx);
    fill(ctx, dtype, shape, [&](int64_t) {
      if constexpr (kDist == Distribution::kNormal) return a_ + b_ * gen.normal();
      else return a_ + (b_ - a_) * gen.uniform();
    });
  }

 private:
  SeedAttr seed_;
  DType dtype_;
  double a_ = 0.0, b_ = 1.0;
  Shape shape_;
};

class BernoulliKernel final : public Kernel {
 public:
  explicit BernoulliKernel(const KernelInit& init) : seed_(init) {
    if (init.has_attr("dtype")) dtype_ = compute_dtype(static_cast<DType>(init.attr_int("dtype")), init.precision());
  }
  void compute(KernelContext& ctx) const override {
    const Tensor& p = ctx.input(0);
    if (!is_floating(p.dtype())) ctx.fail("input must be floating point, got ", dtype_name(p.dtype()));
    const DType dtype = dtype_ == DType::kUndefined ? p.dtype() : dtype_;
    Generator gen = seed_.make(ctx);
    dispatch_dtype<NumericAndBoolTypes>(dtype, ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      Tensor& out = ctx.allocate_output(0, dtype, p.shape());
      T* po = out.data<T>();
      for (int64_t i = 0; i < p.numel(); ++i) po[i] = convert_scalar<T>(gen.uniform() < p.value_as_double(i) ? 1 : 0);
    });
  }

 private:
  SeedAttr seed_;
  DType dtype_ = DType::kUndefined;
};

class MultinomialKernel final : public Kernel {
 public:
  explicit MultinomialKernel(const KernelInit& init)
      : seed_(init),
        sample_size_(init.attr_int("sample_size", 1)),
        dtype_(static_cast<DType>(init.attr_int("dtype", static_cast<int64_t>(DType::kInt32)))) {
    if (dtype_ != DType::kInt32 && dtype_ != DType::kInt64) init.fail("attribute 'dtype' must be int32 or int64");
    if (sample_size_ < 0) init.fail("attribute 'sample_size' must be >= 0");
  }
  void compute(KernelContext& ctx) const override {
    const Tensor& logits = ctx.input(0);
    if (logits.rank() != 2 || !is_floating(logits.dtype()))
      ctx.fail("input must be a 2-D floating tensor (batch, classes), got ", dtype_name(logits.dtype()), " ",
               shape_to_string(logits.shape()));
    const int64_t batch = logits.dim(0), classes = logits.dim(1);
    Generator gen = seed_.make(ctx);
    std::vector<int64_t> samples;
    samples.reserve(static_cast<size_t>(batch * sample_size_));
    std::vector<double> cdf(static_cast<size_t>(classes));
    for (int64_t b = 0; b < batch; ++b) {
      double peak = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < classes; ++c) peak = std::max(peak, logits.value_as_double(b * classes + c));
      double total = 0.0;
      for (int64_t c = 0; c < classes; ++c) {
        total += std::exp(logits.value_as_double(b * classes + c) - peak);
        cdf[c] = total;
      }
      for (int64_t s = 0; s < sample_size_; ++s) {
        const double u = gen.uniform() * total;
        int64_t c = 0;
        while (c + 1 < classes && cdf[c] <= u) ++c;
        samples.push_back(c);
      }
    }
    Tensor& out = ctx.allocate_output(0, dtype_, {batch, sample_size_});
    for (size_t i = 0; i < samples.size(); ++i) {
      if (dtype_ == DType::kInt32) out.data<int32_t>()[i] = static_cast<int32_t>(samples[i]);
      else out.data<int64_t>()[i] = samples[i];
    }
  }

 private:
  SeedAttr seed_;
  int64_t sample_size_;
  DType dtype_;
};

using RandomNormalKernel = RandomKernel<Distribution::kNormal, false>;
using RandomUniformKernel = RandomKernel<Distribution::kUniform, false>;
using RandomNormalLikeKernel = RandomKernel<Distribution::kNormal, true>;
using RandomUniformLikeKernel = RandomKernel<Distribution::kUniform, true>;

}  // namespace

PARITY_REGISTER_KERNEL("", "RandomNormal", 1, RandomNormalKernel);
PARITY_REGISTER_KERNEL("", "RandomUniform", 1, RandomUniformKernel);
PARITY_REGISTER_KERNEL("", "RandomNormalLike", 1, RandomNormalLikeKernel);
PARITY_REGISTER_KERNEL("", "RandomUniformLike", 1, RandomUniformLikeKernel);
PARITY_REGISTER_KERNEL("", "Bernoulli", 15, BernoulliKernel);
PARITY_REGISTER_KERNEL("", "Multinomial", 7, MultinomialKernel);

}  // namespace parity::runtime::ops
