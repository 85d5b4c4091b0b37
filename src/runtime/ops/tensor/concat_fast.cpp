// Spec: https://onnx.ai/onnx/operators/onnx__Concat.html
// Optimized Concat (any fixed-size dtype), beside the reference kernel in concat_split.cpp: the
// output is not zero-filled before it is written (one pass over memory fewer), and large outputs
// copy their blocks on several threads. DenseNet concatenates ever larger feature maps, and
// ShuffleNetV2 and SqueezeNet concatenate two branches per block. Strings, mismatched inputs and
// bad axes run the reference kernel (which reports the error).
#include <cstring>

#include "runtime/ops/common/elementwise_fast.h"
#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime {
namespace {

class FastConcat final : public Kernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    auto reference = init.create_reference_kernel();  // validates the attributes first
    if (init.opset() < 4 && !init.has_attr("axis")) return nullptr;  // Concat-1's default axis: the reference's case
    return std::unique_ptr<Kernel>(new FastConcat(init.attr_int("axis"), std::move(reference)));
  }

  void compute(KernelContext& ctx) const override {
    std::vector<const Tensor*> inputs;
    for (size_t i = 0; i < ctx.num_inputs(); ++i)
      if (ctx.has_input(i)) inputs.push_back(&ctx.input(i));
    std::optional<Shape> out_shape = inputs.empty() ? std::nullopt : output_shape(inputs);
    if (!out_shape) {
      reference_->compute(ctx);
      return;
    }
    const Tensor& first = *inputs[0];
    const int64_t rank = first.rank(), axis = axis_ < 0 ? axis_ + rank : axis_;
    Tensor& out = ctx.allocate_output_uninitialized(0, first.dtype(), *out_shape);
    const size_t elem = dtype_size(first.dtype());
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= (*out_shape)[d];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= (*out_shape)[d];
    // One job per (outer index, input): a contiguous block of the input to its place in the row.
    std::vector<int64_t> block_bytes, offset_bytes;
    int64_t row_bytes = 0;
    for (const Tensor* t : inputs) {
      block_bytes.push_back(t->shape()[axis] * inner * static_cast<int64_t>(elem));
      offset_bytes.push_back(row_bytes);
      row_bytes += block_bytes.back();
    }
    const int64_t jobs = outer * static_cast<int64_t>(inputs.size());
    auto copy = [&](int64_t begin, int64_t end) {
      for (int64_t job = begin; job < end; ++job) {
        const int64_t o = job / static_cast<int64_t>(inputs.size());
        const size_t i = static_cast<size_t>(job % static_cast<int64_t>(inputs.size()));
        if (block_bytes[i] == 0) continue;
        std::memcpy(static_cast<std::byte*>(out.raw_data()) + o * row_bytes + offset_bytes[i],
                    static_cast<const std::byte*>(inputs[i]->raw_data()) + o * block_bytes[i],
                    static_cast<size_t>(block_bytes[i]));
      }
    };
    const int64_t total_bytes = outer * row_bytes;
    const int64_t chunks = std::min<int64_t>(
        {static_cast<int64_t>(ctx.num_threads()), jobs, total_bytes / (4 * ops::fast::kMinParallelElements)});
    if (chunks <= 1) {
      copy(0, jobs);
      return;
    }
    ctx.parallel_for(chunks, [&](int64_t first_chunk, int64_t last_chunk) {
      for (int64_t c = first_chunk; c < last_chunk; ++c) copy(jobs * c / chunks, jobs * (c + 1) / chunks);
    });
  }

 private:
  FastConcat(int64_t axis, std::unique_ptr<Kernel> reference) : axis_(axis), reference_(std::move(reference)) {}

  /// The output shape when the fast path covers the inputs: same fixed-size dtype and rank,
  /// equal dims outside a valid axis.
  std::optional<Shape> output_shape(const std::vector<const Tensor*>& inputs) const {
    const Tensor& first = *inputs[0];
    const int64_t rank = first.rank();
    const size_t elem = dtype_size(first.dtype());
    if (rank == 0 || axis_ < -rank || axis_ >= rank || first.dtype() == DType::kString || elem == 0) return std::nullopt;
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    Shape shape = first.shape();
    shape[axis] = 0;
    for (const Tensor* t : inputs) {
      if (t->dtype() != first.dtype() || t->rank() != rank) return std::nullopt;
      for (int64_t d = 0; d < rank; ++d)
        if (d != axis && t->shape()[d] != first.shape()[d]) return std::nullopt;
      shape[axis] += t->shape()[axis];
    }
    return shape;
  }

  int64_t axis_;
  std::unique_ptr<Kernel> reference_;
};

}  // namespace

PARITY_REGISTER_OPTIMIZED_KERNEL("", "Concat", (1, 4), FastConcat);

}  // namespace parity::runtime
