// Spec: https://onnx.ai/onnx/operators/onnx__Scatter.html, onnx__ScatterElements.html,
//       onnx__ScatterND.html, onnx__TensorScatter.html
// Scatter (deprecated alias), ScatterElements and ScatterND, with the reductions of 16/18, and
// TensorScatter (opset 24, KV-cache updates).
#include <algorithm>

#include "runtime/ops/common/axis.h"
#include "runtime/ops/common/dispatch.h"
#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime {
namespace {

using tensor_ops::checked_index;
using tensor_ops::elements;
using tensor_ops::visit_storage_type;
using ops::normalize_axis;
using ops::read_int_values;
using ops::size_from_axis;
using ops::size_to_axis;

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Reduction parse_reduction(const KernelInit& init) {
  const std::string r = init.attr_string("reduction", "none");
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max" && init.opset() >= 18) return Reduction::kMax;
  if (r == "min" && init.opset() >= 18) return Reduction::kMin;
  init.fail("unsupported reduction '", r, "'");
}

template <typename T>
void combine(T& dst, const T& update, Reduction reduction) {
  using C = ops::compute_t<T>;
  const C a = static_cast<C>(dst);
  const C b = static_cast<C>(update);
  switch (reduction) {
    case Reduction::kNone: dst = update; break;
    case Reduction::kAdd: dst = static_cast<T>(a + b); break;
    case Reduction::kMul: dst = static_cast<T>(a * b); break;
    case Reduction::kMax: dst = static_cast<T>(std::max(a, b)); break;
    case Reduction::kMin: dst = static_cast<T>(std::min(a, b)); break;
  }
}

/// Runs fn(TypeTag<T>) with a storage type (any dtype) when there is no reduction, or with the
/// numeric element type when updates must be combined arithmetically.
template <typename Fn>
void dispatch_for_reduction(DType dtype, Reduction reduction, const KernelContext& ctx, Fn&& fn) {
  if (reduction == Reduction::kNone) {
    tensor_ops::visit_storage_type(dtype, fn);
  } else {
    ops::dispatch_dtype<ops::NumericTypes>(dtype, ctx, fn);
  }
}

class ScatterElementsKernel final : public Kernel {
 public:
  explicit ScatterElementsKernel(const KernelInit& init)
      : axis_(init.attr_int("axis", 0)), reduction_(parse_reduction(init)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices_t = ctx.input(1);
    const Tensor& updates = ctx.input(2);
    const int64_t rank = data.rank();
    if (rank == 0) ctx.fail("data must have rank >= 1");
    if (indices_t.shape() != updates.shape())
      ctx.fail("indices ", shape_to_string(indices_t.shape()), " and updates ", shape_to_string(updates.shape()),
               " must have the same shape");
    if (updates.dtype() != data.dtype())
      ctx.fail("updates have dtype ", dtype_name(updates.dtype()), ", data has ", dtype_name(data.dtype()));
    if (indices_t.rank() != rank)
      ctx.fail("indices ", shape_to_string(indices_t.shape()), " must have the rank of data ",
               shape_to_string(data.shape()));
    const int64_t axis = ops::normalize_axis(axis_, rank, ctx);
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && indices_t.shape()[d] > data.shape()[d])
        ctx.fail("indices ", shape_to_string(indices_t.shape()), " exceed data ", shape_to_string(data.shape()),
                 " on axis ", d);
    std::vector<int64_t> indices = ops::read_int_values(ctx, indices_t, "indices");
    const std::vector<int64_t> strides = shape_strides(data.shape());
    std::vector<int64_t> walk_strides = strides;
    walk_strides[axis] = 0;
    const int64_t dim = data.shape()[axis];
    for (int64_t& i : indices) i = checked_index(i, dim, ctx, axis);

    Tensor out = data.clone();
    dispatch_for_reduction(data.dtype(), reduction_, ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* dst = elements<T>(out);
      const T* src = elements<T>(updates);
      tensor_ops::for_each_offset(indices_t.shape(), walk_strides, [&](int64_t i, int64_t base) {
        T& target = dst[base + indices[i] * strides[axis]];
        if constexpr (std::is_arithmetic_v<T> || ops::is_half_v<T>) {
          combine(target, src[i], reduction_);
        } else {
          target = src[i];
        }
      });
    });
    ctx.set_output(0, std::move(out));
  }

 private:
  int64_t axis_;
  Reduction reduction_;
};

class ScatterNDKernel final : public Kernel {
 public:
  explicit ScatterNDKernel(const KernelInit& init) : reduction_(parse_reduction(init)) {}

  void compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices_t = ctx.input(1);
    const Tensor& updates = ctx.input(2);
    const int64_t r = data.rank();
    const int64_t q = indices_t.rank();
    if (r < 1 || q < 1) ctx.fail("data and indices must have rank >= 1");
    const int64_t k = indices_t.shape().back();
    if (k > r) ctx.fail("the last dimension of indices (", k, ") exceeds the rank of data (", r, ")");
    Shape expected(indices_t.shape().begin(), indices_t.shape().end() - 1);
    expected.insert(expected.end(), data.shape().begin() + k, data.shape().end());
    if (updates.shape() != expected)
      ctx.fail("updates have shape ", shape_to_string(updates.shape()), ", expected ", shape_to_string(expected));
    if (updates.dtype() != data.dtype())
      ctx.fail("updates have dtype ", dtype_name(updates.dtype()), ", data has ", dtype_name(data.dtype()));
    std::vector<int64_t> indices = ops::read_int_values(ctx, indices_t, "indices");
    for (size_t i = 0; i < indices.size(); ++i) {
      const int64_t axis = static_cast<int64_t>(i) % k;
      indices[i] = checked_index(indices[i], data.shape()[axis], ctx, axis);
    }
    const std::vector<int64_t> strides = shape_strides(data.shape());
    int64_t slice = 1;
    for (int64_t d = k; d < r; ++d) slice *= data.shape()[d];
    const int64_t tuples = shape_numel(Shape(indices_t.shape().begin(), indices_t.shape().end() - 1));

    Tensor out = data.clone();
    dispatch_for_reduction(data.dtype(), reduction_, ctx, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* dst = elements<T>(out);
      const T* src = elements<T>(updates);
      for (int64_t t = 0; t < tuples; ++t) {
        int64_t offset = 0;
        for (int64_t j = 0; j < k; ++j)
          offset += indices[t * k + j] * strides[j];
        for (int64_t e = 0; e < slice; ++e) {
          if constexpr (std::is_arithmetic_v<T> || ops::is_half_v<T>) {
            combine(dst[offset + e], src[t * slice + e], reduction_);
          } else {
            dst[offset + e] = src[t * slice + e];
          }
        }
      }
    });
    ctx.set_output(0, std::move(out));
  }

 private:
  Reduction reduction_;
};

/// https://onnx.ai/onnx/operators/onnx__TensorScatter.html: writes `update` into a copy of
/// `past_cache` along `axis`, batch b starting at write_indices[b] (0 when absent); in "circular"
/// mode positions wrap around the cache's length, in "linear" mode they must fit.
class TensorScatterKernel final : public Kernel {
 public:
  explicit TensorScatterKernel(const KernelInit& init) : axis_(init.attr_int("axis", -2)) {
    const std::string mode = init.attr_string("mode", "linear");
    if (mode != "linear" && mode != "circular") init.fail("attribute 'mode' must be linear or circular, got '", mode, "'");
    circular_ = mode == "circular";
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& cache = ctx.input(0);
    const Tensor& update = ctx.input(1);
    const int64_t rank = cache.rank();
    if (rank < 2 || update.rank() != rank) ctx.fail("past_cache and update must have the same rank (at least 2)");
    const int64_t axis = normalize_axis(axis_, rank, ctx);
    if (axis == 0) ctx.fail("axis must not be the batch axis 0");
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && update.dim(d) != cache.dim(d))
        ctx.fail("update shape ", shape_to_string(update.shape()), " differs from past_cache ",
                 shape_to_string(cache.shape()), " outside axis ", axis);
    if (update.dtype() != cache.dtype()) ctx.fail("update and past_cache have different types");
    const int64_t batch = cache.dim(0), max_len = cache.dim(axis), len = update.dim(axis);
    std::vector<int64_t> starts(static_cast<size_t>(batch), 0);
    if (ctx.has_input(2)) {
      starts = read_int_values(ctx, ctx.input(2), "write_indices");
      if (static_cast<int64_t>(starts.size()) != batch)
        ctx.fail("write_indices has ", starts.size(), " values for a batch of ", batch);
    }
    const int64_t outer = size_to_axis(cache.shape(), axis) / batch;  // dims between batch and axis
    const int64_t inner = size_from_axis(cache.shape(), axis + 1);
    Tensor out = cache.clone();
    visit_storage_type(cache.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      const S* src = elements<S>(update);
      S* dst = elements<S>(out);
      for (int64_t b = 0; b < batch; ++b) {
        // Reduced to the cache first: write_indices come from data, and start + k may overflow.
        int64_t first = starts[b];
        if (circular_ && max_len > 0) first = (first % max_len + max_len) % max_len;
        else if (first < 0 || first > max_len - len)
          ctx.fail("batch ", b, " writes ", len, " positions from ", first, ", past the cache length ", max_len);
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t k = 0; k < len; ++k) {
            const int64_t pos = circular_ ? (first + k) % max_len : first + k;
            const S* from = src + ((b * outer + o) * len + k) * inner;
            std::copy(from, from + inner, dst + ((b * outer + o) * max_len + pos) * inner);
          }
      }
    });
    ctx.set_output(0, Value(std::move(out)));
  }

 private:
  int64_t axis_;
  bool circular_ = false;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Scatter", 9, ScatterElementsKernel);
PARITY_REGISTER_KERNEL("", "ScatterElements", (11, 16, 18), ScatterElementsKernel);
PARITY_REGISTER_KERNEL("", "ScatterND", (11, 16, 18), ScatterNDKernel);
PARITY_REGISTER_KERNEL("", "TensorScatter", 24, TensorScatterKernel);

}  // namespace parity::runtime
