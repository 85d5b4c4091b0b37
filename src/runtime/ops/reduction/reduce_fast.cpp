// Spec: https://onnx.ai/onnx/operators/onnx__ReduceMean.html, onnx__ReduceSum.html
// Optimized fp32 ReduceSum / ReduceMean over one contiguous block of axes (LayerNorm
// decompositions reduce the last axis; pooling-like graphs reduce H and W), beside the reference
// kernels in reduce.cpp. The axes are read once at plan time (attribute or constant input), and
// each output sums its inputs in double in the reference's order, so results are bit-identical.
// Other dtypes, scattered axes, empty tensors and invalid axes run the reference kernel.
#include <algorithm>
#include <memory>
#include <vector>

#include "runtime/ops/common/axis.h"

namespace parity::runtime::ops {
namespace {

// Below this many input elements a thread hand-off costs more than it saves.
constexpr int64_t kMinParallelElements = 64 * 1024;

template <bool kMean>
class BlockReduceKernel final : public Kernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    if (init.precision() != Precision::kFloat32) return nullptr;
    const DType dtype = init.input_dtype(0);
    if (dtype != DType::kFloat32 && dtype != DType::kUndefined) return nullptr;
    const bool axes_from_input = kMean ? init.spec().since_version >= 18 : init.spec().since_version >= 13;
    std::vector<int64_t> axes;
    if (!axes_from_input) {
      axes = init.attr_ints("axes", {});
    } else if (init.has_input(1)) {
      std::optional<Tensor> t = init.constant_input(1);
      if (!t || (t->dtype() != DType::kInt64 && t->dtype() != DType::kInt32)) return nullptr;
      axes = read_int_values(init, *t, "axes");
    }
    // Empty axes with noop_with_empty_axes pass the input through: the reference does that.
    if (axes.empty() && axes_from_input && init.attr_int("noop_with_empty_axes", 0) != 0) return nullptr;
    return std::unique_ptr<Kernel>(new BlockReduceKernel(init, std::move(axes)));
  }

  void compute(KernelContext& ctx) const override {
    if (!try_fast(ctx)) reference_->compute(ctx);
  }

 private:
  BlockReduceKernel(const KernelInit& init, std::vector<int64_t> axes)
      : axes_(std::move(axes)), keepdims_(init.attr_int("keepdims", 1) != 0), reference_(init.create_reference_kernel()) {}

  bool try_fast(KernelContext& ctx) const {
    if (!ctx.input_value(0).is_tensor()) return false;
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    if (x.dtype() != DType::kFloat32 || rank == 0 || rank > kMaxRank || x.numel() == 0) return false;
    bool reduced[kMaxRank] = {};
    for (int64_t a : axes_) {
      if (a < -rank || a >= rank || reduced[a < 0 ? a + rank : a]) return false;  // the reference reports it
      reduced[a < 0 ? a + rank : a] = true;
    }
    if (axes_.empty()) std::fill(reduced, reduced + rank, true);
    int64_t first = 0;
    while (!reduced[first]) ++first;
    int64_t last = first;
    while (last + 1 < rank && reduced[last + 1]) ++last;
    for (int64_t d = last + 1; d < rank; ++d)
      if (reduced[d]) return false;  // not one block
    const Shape& shape = x.shape();
    int64_t outer = 1, len = 1, inner = 1;
    Shape out_shape;
    out_shape.reserve(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) {
      (d < first ? outer : d <= last ? len : inner) *= shape[d];
      if (!reduced[d]) out_shape.push_back(shape[d]);
      else if (keepdims_) out_shape.push_back(1);
    }
    Tensor& out = ctx.allocate_output_uninitialized(0, DType::kFloat32, out_shape);
    const float* in = x.data<float>();
    float* y = out.data<float>();
    auto rows = [&](int64_t begin, int64_t end) {
      if (inner == 1) {
        for (int64_t o = begin; o < end; ++o) {
          const float* row = in + o * len;
          double acc = 0.0;
          for (int64_t l = 0; l < len; ++l) acc += static_cast<double>(row[l]);
          y[o] = static_cast<float>(kMean ? acc / static_cast<double>(len) : acc);
        }
        return;
      }
      std::vector<double> acc(static_cast<size_t>(inner));
      for (int64_t o = begin; o < end; ++o) {
        std::fill(acc.begin(), acc.end(), 0.0);
        const float* block = in + o * len * inner;
        for (int64_t l = 0; l < len; ++l)
          for (int64_t i = 0; i < inner; ++i) acc[i] += static_cast<double>(block[l * inner + i]);
        for (int64_t i = 0; i < inner; ++i)
          y[o * inner + i] = static_cast<float>(kMean ? acc[i] / static_cast<double>(len) : acc[i]);
      }
    };
    if (outer > 1 && ctx.num_threads() > 1 && x.numel() >= kMinParallelElements) ctx.parallel_for(outer, rows);
    else rows(0, outer);
    return true;
  }

  static constexpr int64_t kMaxRank = 16;
  std::vector<int64_t> axes_;
  bool keepdims_;
  std::unique_ptr<Kernel> reference_;
};

using BlockReduceMean = BlockReduceKernel<true>;
using BlockReduceSum = BlockReduceKernel<false>;

}  // namespace

// The same since_versions as the reference registrations.
PARITY_REGISTER_OPTIMIZED_KERNEL("", "ReduceMean", (1, 11, 13, 18), BlockReduceMean);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "ReduceSum", (1, 11, 13), BlockReduceSum);

}  // namespace parity::runtime::ops
