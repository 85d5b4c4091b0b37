// Spec: https://onnx.ai/onnx/operators/onnx__SequenceEmpty.html, onnx__SequenceConstruct.html,
//       onnx__SequenceInsert.html, onnx__SequenceAt.html, onnx__SequenceErase.html,
//       onnx__SequenceLength.html
// Sequence operators: SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt,
// SequenceErase, SequenceLength.
#include "runtime/kernel.h"

namespace parity::runtime {
namespace {

const Value& sequence_input(KernelContext& ctx, size_t i) {
  const Value& v = ctx.input_value(i);
  if (!v.is_sequence()) ctx.fail("input ", i, " must be a sequence");
  return v;
}

/// Reads a position input (scalar int32/int64) and normalizes it to [0, size] (or [0, size) when
/// !allow_end).
int64_t position(KernelContext& ctx, size_t input, int64_t size, bool allow_end) {
  const Tensor& p = ctx.input(input);
  if (p.numel() != 1 || !is_integer(p.dtype())) ctx.fail("position must be an integer scalar");
  int64_t pos = static_cast<int64_t>(p.value_as_double(0));
  const int64_t limit = allow_end ? size : size - 1;
  if (pos < -size || pos > limit) ctx.fail("position ", pos, " is out of range for a sequence of ", size, " tensors");
  return pos < 0 ? pos + size : pos;
}

class SequenceEmpty : public Kernel {
 public:
  explicit SequenceEmpty(const KernelInit& init)
      : dtype_(compute_dtype(static_cast<DType>(init.attr_int("dtype", static_cast<int>(DType::kFloat32))),
                             init.precision())) {}
  void compute(KernelContext& ctx) const override { ctx.set_output(0, Value::sequence({}, dtype_)); }

 private:
  DType dtype_;
};

class SequenceConstruct : public Kernel {
 public:
  explicit SequenceConstruct(const KernelInit&) {}
  void compute(KernelContext& ctx) const override {
    std::vector<Tensor> items;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      items.push_back(ctx.input(i));
      if (items.back().dtype() != items.front().dtype()) ctx.fail("all inputs must have the same dtype");
    }
    const DType d = items.empty() ? DType::kUndefined : items.front().dtype();
    ctx.set_output(0, Value::sequence(std::move(items), d));
  }
};

class SequenceInsert : public Kernel {
 public:
  explicit SequenceInsert(const KernelInit&) {}
  void compute(KernelContext& ctx) const override {
    const Value& seq = sequence_input(ctx, 0);
    std::vector<Tensor> items = seq.sequence_items();
    const Tensor& t = ctx.input(1);
    const DType d = seq.sequence_dtype() == DType::kUndefined ? t.dtype() : seq.sequence_dtype();
    if (t.dtype() != d) ctx.fail("cannot insert a ", dtype_name(t.dtype()), " tensor into a sequence of ", dtype_name(d));
    const int64_t size = static_cast<int64_t>(items.size());
    const int64_t pos = ctx.has_input(2) ? position(ctx, 2, size, true) : size;
    items.insert(items.begin() + pos, t);
    ctx.set_output(0, Value::sequence(std::move(items), d));
  }
};

class SequenceAt : public Kernel {
 public:
  explicit SequenceAt(const KernelInit&) {}
  void compute(KernelContext& ctx) const override {
    const auto& items = sequence_input(ctx, 0).sequence_items();
    const int64_t pos = position(ctx, 1, static_cast<int64_t>(items.size()), false);
    ctx.set_output(0, Value(items[pos]));
  }
};

class SequenceErase : public Kernel {
 public:
  explicit SequenceErase(const KernelInit&) {}
  void compute(KernelContext& ctx) const override {
    const Value& seq = sequence_input(ctx, 0);
    std::vector<Tensor> items = seq.sequence_items();
    const int64_t size = static_cast<int64_t>(items.size());
    if (size == 0) ctx.fail("cannot erase from an empty sequence");
    const int64_t pos = ctx.has_input(1) ? position(ctx, 1, size, false) : size - 1;
    items.erase(items.begin() + pos);
    ctx.set_output(0, Value::sequence(std::move(items), seq.sequence_dtype()));
  }
};

class SequenceLength : public Kernel {
 public:
  explicit SequenceLength(const KernelInit&) {}
  void compute(KernelContext& ctx) const override {
    ctx.set_output(0, Value(Tensor::scalar<int64_t>(static_cast<int64_t>(sequence_input(ctx, 0).sequence_items().size()))));
  }
};

}  // namespace

PARITY_REGISTER_KERNEL("", "SequenceEmpty", 11, SequenceEmpty);
PARITY_REGISTER_KERNEL("", "SequenceConstruct", 11, SequenceConstruct);
PARITY_REGISTER_KERNEL("", "SequenceInsert", 11, SequenceInsert);
PARITY_REGISTER_KERNEL("", "SequenceAt", 11, SequenceAt);
PARITY_REGISTER_KERNEL("", "SequenceErase", 11, SequenceErase);
PARITY_REGISTER_KERNEL("", "SequenceLength", 11, SequenceLength);

}  // namespace parity::runtime
