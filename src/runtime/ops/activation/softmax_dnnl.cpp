// Spec: https://onnx.ai/onnx/operators/onnx__Softmax.html, onnx__LogSoftmax.html
// Optimized Softmax / LogSoftmax (float32) on oneDNN, beside the reference kernels in softmax.cpp.
// Both opset families reduce to normalizing the middle dim of an (outer, len, inner) view: before
// opset 13 the input is coerced to 2-D at 'axis' (len = everything from axis on, inner = 1);
// since 13 only 'axis' is normalized. Other dtypes, scalars and empty tensors use the reference.
#if PARITY_HAVE_DNNL

#include <memory>
#include <vector>

#include "runtime/dnnl/dnnl_support.h"
#include "runtime/dnnl/row_chunks.h"
#include "runtime/ops/common/reference_chain.h"
#include "runtime/ops/common/axis.h"

namespace parity::runtime::ops {
namespace {

namespace ds = dnnl_support;
using dnnl::memory;

// Below this many elements a thread hand-off costs more than it saves.
constexpr int64_t kMinParallelElements = 64 * 1024;

struct SoftmaxPrimitive {
  dnnl::primitive prim;
  memory::desc data, scratchpad;
};

template <bool kLog>
class DnnlSoftmaxKernel final : public Kernel {
 public:
  static std::unique_ptr<Kernel> create(const KernelInit& init) {
    const DType dtype = init.input_dtype(0);
    if (dtype != DType::kFloat32 && dtype != DType::kUndefined) return nullptr;
    return std::unique_ptr<Kernel>(new DnnlSoftmaxKernel(init));
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t rank = x.rank();
    if (x.dtype() != DType::kFloat32 || rank == 0 || x.numel() == 0 || axis_ < -rank || axis_ >= rank)
      return reference_.compute(ctx);
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    const int64_t outer = size_to_axis(x.shape(), axis);
    const int64_t len = flatten_ ? size_from_axis(x.shape(), axis) : x.dim(axis);
    const int64_t inner = flatten_ ? 1 : size_from_axis(x.shape(), axis + 1);
    const int64_t chunks = ds::row_chunk_count(ctx, outer, 1, x.numel(), kMinParallelElements);
    // One primitive per chunk size (at most two); chunks run single-threaded on parity's threads.
    auto primitive_for = [&](int64_t rows) {
      return cache_.get({rows, len, inner}, [&] {
        ds::ThreadScope scope(1);
        SoftmaxPrimitive p;
        p.data = inner == 1 ? memory::desc({rows, len}, memory::data_type::f32, memory::format_tag::ab)
                            : memory::desc({rows, len, inner}, memory::data_type::f32, memory::format_tag::abc);
        if constexpr (kLog) {
          const dnnl::logsoftmax_forward::desc desc(dnnl::prop_kind::forward_inference, p.data, 1);
          const dnnl::logsoftmax_forward::primitive_desc pd(desc, ds::user_scratchpad_attr(), ds::cpu_engine());
          p.prim = dnnl::logsoftmax_forward(pd);
          p.scratchpad = pd.scratchpad_desc();
        } else {
          const dnnl::softmax_forward::desc desc(dnnl::prop_kind::forward_inference, p.data, 1);
          const dnnl::softmax_forward::primitive_desc pd(desc, ds::user_scratchpad_attr(), ds::cpu_engine());
          p.prim = dnnl::softmax_forward(pd);
          p.scratchpad = pd.scratchpad_desc();
        }
        return p;
      });
    };
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, x.shape());
    float* src = const_cast<float*>(x.data<float>());
    float* dst = y.data<float>();
    ds::run_chunks_with_primitives(ctx, outer, chunks, primitive_for, [&](const SoftmaxPrimitive& p, int64_t begin) {
      const int64_t offset = begin * len * inner;
      std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(p.data, ds::cpu_engine(), src + offset)},
                                           {DNNL_ARG_DST, memory(p.data, ds::cpu_engine(), dst + offset)}};
      if (p.scratchpad.get_size() > 0) args.emplace(DNNL_ARG_SCRATCHPAD, ds::thread_scratchpad(p.scratchpad));
      ds::execute(p.prim, args, 1);
    });
  }

 private:
  explicit DnnlSoftmaxKernel(const KernelInit& init)
      : reference_(init.create_reference_kernel(), init.num_inputs()),
        flatten_(init.spec().since_version < 13),
        axis_(init.attr_int("axis", flatten_ ? 1 : -1)) {}

  ReferenceChain reference_;  // the reference kernel, for the cases above
  bool flatten_;
  int64_t axis_;
  ds::ShapeCache<SoftmaxPrimitive> cache_;
};

using DnnlSoftmax = DnnlSoftmaxKernel<false>;
using DnnlLogSoftmax = DnnlSoftmaxKernel<true>;

}  // namespace

PARITY_REGISTER_OPTIMIZED_KERNEL("", "Softmax", (1, 11, 13), DnnlSoftmax);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "LogSoftmax", (1, 11, 13), DnnlLogSoftmax);

}  // namespace parity::runtime::ops

#endif  // PARITY_HAVE_DNNL
