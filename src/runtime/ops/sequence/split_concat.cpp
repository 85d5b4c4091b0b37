// Spec: https://onnx.ai/onnx/operators/onnx__SplitToSequence.html, onnx__ConcatFromSequence.html
// SplitToSequence and ConcatFromSequence.
#include "runtime/kernel.h"
#include "runtime/ops/common/axis.h"
#include "runtime/tensor_util.h"

namespace parity::runtime {
namespace {

class SplitToSequence : public Kernel {
 public:
  explicit SplitToSequence(const KernelInit& init)
      : axis_(init.attr_int("axis", 0)), keepdims_(init.attr_int("keepdims", 1) != 0) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= rank) ctx.fail("axis ", axis_, " is out of range for rank ", rank);
    const int64_t dim = x.shape()[axis];
    std::vector<Tensor> items;
    if (!ctx.has_input(1)) {
      for (int64_t i = 0; i < dim; ++i) items.push_back(keepdims_ ? slice_axis(x, axis, i, 1) : take_axis(x, axis, i));
    } else {
      const Tensor& split = ctx.input(1);
      const std::vector<int64_t> split_values = ops::read_int_values(ctx, split, "split");
      std::vector<int64_t> sizes;
      if (split.rank() == 0) {
        const int64_t chunk = split_values.at(0);
        if (chunk <= 0) ctx.fail("split size must be positive, got ", chunk);
        for (int64_t s = 0; s < dim; s += sizes.back()) sizes.push_back(std::min(chunk, dim - s));
      } else {
        int64_t total = 0;
        for (int64_t size : split_values) {
          if (size < 0) ctx.fail("split sizes must not be negative");
          if (size > dim - total) ctx.fail("split sizes sum past axis ", axis, " of size ", dim);
          sizes.push_back(size);
          total += size;
        }
        if (total != dim) ctx.fail("split sizes sum to ", total, " but axis ", axis, " has ", dim);
      }
      int64_t start = 0;
      for (int64_t s : sizes) {
        items.push_back(slice_axis(x, axis, start, s));
        start += s;
      }
    }
    ctx.set_output(0, Value::sequence(std::move(items), x.dtype()));
  }

 private:
  int64_t axis_;
  bool keepdims_;
};

class ConcatFromSequence : public Kernel {
 public:
  explicit ConcatFromSequence(const KernelInit& init)
      : axis_(init.attr_int("axis")), new_axis_(init.attr_int("new_axis", 0) != 0) {}
  void compute(KernelContext& ctx) const override {
    const Value& seq = ctx.input_value(0);
    if (!seq.is_sequence()) ctx.fail("input must be a sequence");
    const auto& items = seq.sequence_items();
    if (items.empty()) ctx.fail("cannot concatenate an empty sequence");
    const int64_t rank = items.front().rank() + (new_axis_ ? 1 : 0);
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= rank) ctx.fail("axis ", axis_, " is out of range");
    ctx.set_output(0, Value(new_axis_ ? stack_tensors(items, axis, ctx.node_label(), {.node = ctx.node_error_name()})
                                      : concat_tensors(items, axis, ctx.node_label(), {.node = ctx.node_error_name()})));
  }

 private:
  int64_t axis_;
  bool new_axis_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "SplitToSequence", 11, SplitToSequence);
PARITY_REGISTER_KERNEL("", "ConcatFromSequence", 11, ConcatFromSequence);

}  // namespace parity::runtime
