// Spec: https://onnx.ai/onnx/operators/onnx__Concat.html, onnx__Split.html
// Concat and Split along one axis.
#include <algorithm>
#include <numeric>

#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime {
namespace {

using tensor_ops::elements;
using ops::normalize_axis;
using tensor_ops::visit_storage_type;

/// Product of the dims before `axis` and after it.
std::pair<int64_t, int64_t> outer_inner(const Shape& shape, int64_t axis) {
  int64_t outer = 1;
  int64_t inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  return {outer, inner};
}

class ConcatKernel final : public Kernel {
 public:
  // Concat-1 defaulted axis to 1; from 4 on it is required.
  explicit ConcatKernel(const KernelInit& init)
      : axis_(init.opset() < 4 ? init.attr_int("axis", 1) : init.attr_int("axis")) {}

  void compute(KernelContext& ctx) const override {
    std::vector<const Tensor*> inputs;
    for (size_t i = 0; i < ctx.num_inputs(); ++i)
      if (ctx.has_input(i)) inputs.push_back(&ctx.input(i));
    if (inputs.empty()) ctx.fail("needs at least one input");
    const Tensor& first = *inputs[0];
    if (first.rank() == 0) ctx.fail("cannot concatenate scalars");
    const int64_t axis = normalize_axis(axis_, first.rank(), ctx);
    Shape out_shape = first.shape();
    out_shape[axis] = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& t = *inputs[i];
      if (t.dtype() != first.dtype())
        ctx.fail("input ", i, " has dtype ", dtype_name(t.dtype()), ", input 0 has ", dtype_name(first.dtype()));
      bool compatible = t.rank() == first.rank();
      for (int64_t d = 0; compatible && d < t.rank(); ++d)
        compatible = d == axis || t.shape()[d] == first.shape()[d];
      if (!compatible)
        ctx.fail("input ", i, " has shape ", shape_to_string(t.shape()), ", which does not match input 0 ",
                 shape_to_string(first.shape()), " outside axis ", axis);
      out_shape[axis] += t.shape()[axis];
    }
    Tensor& out = ctx.allocate_output(0, first.dtype(), out_shape);
    // Plain variables, not a structured binding: clang 14 (the sanitizer build) cannot capture those.
    const auto [outer_extent, inner_extent] = outer_inner(out_shape, axis);
    const int64_t outer = outer_extent, inner = inner_extent;
    visit_storage_type(first.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      S* dst = elements<S>(out);
      for (int64_t o = 0; o < outer; ++o) {
        for (const Tensor* t : inputs) {
          const int64_t block = t->shape()[axis] * inner;
          const S* src = elements<S>(*t) + o * block;
          dst = std::copy(src, src + block, dst);
        }
      }
    });
  }

 private:
  int64_t axis_;
};

/// Split: sizes come from the 'split' attribute (< 13), input 1 (opset 1 and >= 13), or
/// 'num_outputs' (18); otherwise the axis is divided equally among the outputs.
class SplitKernel final : public Kernel {
 public:
  explicit SplitKernel(const KernelInit& init)
      : axis_(init.attr_int("axis", 0)),
        split_from_input_(init.opset() >= 13 || init.opset() < 2),
        num_outputs_(init.attr_int("num_outputs", 0)) {
    if (init.opset() < 13 && init.has_attr("split")) attr_split_ = init.attr_ints("split");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    if (data.rank() == 0) ctx.fail("cannot split a scalar");
    const int64_t axis = normalize_axis(axis_, data.rank(), ctx);
    const int64_t dim = data.shape()[axis];
    const int64_t count = static_cast<int64_t>(ctx.num_outputs());
    std::vector<int64_t> sizes;
    if (attr_split_) {
      sizes = *attr_split_;
    } else if (split_from_input_ && ctx.has_input(1)) {
      sizes = ops::read_int_values(ctx, ctx.input(1), "split");
    } else if (num_outputs_ > 0) {
      const int64_t chunk = (dim + num_outputs_ - 1) / num_outputs_;
      for (int64_t i = 0; i < num_outputs_; ++i) sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
    } else {
      if (count == 0 || dim % count != 0)
        ctx.fail("axis ", axis, " of size ", dim, " cannot be split equally into ", count, " outputs");
      sizes.assign(static_cast<size_t>(count), dim / count);
    }
    if (static_cast<int64_t>(sizes.size()) != count)
      ctx.fail("split has ", sizes.size(), " entries but the node has ", count, " outputs");
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0) ctx.fail("split sizes ", shape_to_string(sizes), " contain a negative size");
      if (s > dim - total) ctx.fail("split sizes ", shape_to_string(sizes), " sum past axis ", axis, " of size ", dim);
      total += s;
    }
    if (total != dim)
      ctx.fail("split sizes ", shape_to_string(sizes), " sum to ", total, ", but axis ", axis, " has size ", dim);

    const auto [outer_extent, inner_extent] = outer_inner(data.shape(), axis);
    const int64_t outer = outer_extent, inner = inner_extent;
    visit_storage_type(data.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      const S* src = elements<S>(data);
      int64_t offset = 0;  // along the axis
      for (int64_t i = 0; i < count; ++i) {
        const int64_t size = sizes[i];
        if (ctx.has_output(static_cast<size_t>(i))) {
          Shape shape = data.shape();
          shape[axis] = size;
          Tensor& out = ctx.allocate_output(static_cast<size_t>(i), data.dtype(), shape);
          S* dst = elements<S>(out);
          for (int64_t o = 0; o < outer; ++o) {
            const S* begin = src + (o * dim + offset) * inner;
            dst = std::copy(begin, begin + size * inner, dst);
          }
        }
        offset += size;
      }
    });
  }

 private:
  int64_t axis_;
  bool split_from_input_;
  int64_t num_outputs_;
  std::optional<std::vector<int64_t>> attr_split_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Concat", (1, 4), ConcatKernel);
PARITY_REGISTER_KERNEL("", "Split", (1, 2, 13, 18), SplitKernel);

}  // namespace parity::runtime
