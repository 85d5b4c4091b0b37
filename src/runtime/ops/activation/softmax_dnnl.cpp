// Optimized Softmax / LogSoftmax (float32) on oneDNN, beside the reference kernels in softmax.cpp.
// Both opset families reduce to normalizing the middle dim of an (outer, len, inner) view: before
// opset 13 the input is coerced to 2-D at 'axis' (len = everything from axis on, inner = 1);
// since 13 only 'axis' is normalized. Other dtypes, scalars and empty tensors use the reference.
#if PARITY_HAVE_DNNL

#include "runtime/dnnl/dnnl_support.h"
#include "runtime/ops/common/axis.h"

namespace parity::runtime::ops {
namespace {

namespace ds = dnnl_support;
using dnnl::memory;

struct SoftmaxPrimitive {
  dnnl::primitive prim;
  memory::desc data;
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
      return reference_->compute(ctx);
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    const int64_t outer = size_to_axis(x.shape(), axis);
    const int64_t len = flatten_ ? size_from_axis(x.shape(), axis) : x.dim(axis);
    const int64_t inner = flatten_ ? 1 : size_from_axis(x.shape(), axis + 1);
    const int threads = ctx.num_threads();
    auto prim = cache_.get({threads, outer, len, inner}, [&] {
      ds::ThreadScope scope(threads);
      SoftmaxPrimitive p;
      p.data = inner == 1 ? memory::desc({outer, len}, memory::data_type::f32, memory::format_tag::ab)
                          : memory::desc({outer, len, inner}, memory::data_type::f32, memory::format_tag::abc);
      if constexpr (kLog) {
        const dnnl::logsoftmax_forward::desc desc(dnnl::prop_kind::forward_inference, p.data, 1);
        p.prim = dnnl::logsoftmax_forward(dnnl::logsoftmax_forward::primitive_desc(desc, ds::cpu_engine()));
      } else {
        const dnnl::softmax_forward::desc desc(dnnl::prop_kind::forward_inference, p.data, 1);
        p.prim = dnnl::softmax_forward(dnnl::softmax_forward::primitive_desc(desc, ds::cpu_engine()));
      }
      return p;
    });
    Tensor& y = ctx.allocate_output_uninitialized(0, DType::kFloat32, x.shape());
    ds::execute(prim->prim, {{DNNL_ARG_SRC, ds::wrap(prim->data, x)}, {DNNL_ARG_DST, ds::wrap(prim->data, y)}},
                threads);
  }

 private:
  explicit DnnlSoftmaxKernel(const KernelInit& init)
      : reference_(init.create_reference_kernel()),
        flatten_(init.spec().since_version < 13),
        axis_(init.attr_int("axis", flatten_ ? 1 : -1)) {}

  std::unique_ptr<Kernel> reference_;
  bool flatten_;
  int64_t axis_;
  ds::ShapeCache<SoftmaxPrimitive> cache_;
};

using DnnlSoftmax = DnnlSoftmaxKernel<false>;
using DnnlLogSoftmax = DnnlSoftmaxKernel<true>;

}  // namespace

PARITY_REGISTER_OPTIMIZED_KERNEL("", "Softmax", 1, DnnlSoftmax);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "Softmax", 11, DnnlSoftmax);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "Softmax", 13, DnnlSoftmax);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "LogSoftmax", 1, DnnlLogSoftmax);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "LogSoftmax", 11, DnnlLogSoftmax);
PARITY_REGISTER_OPTIMIZED_KERNEL("", "LogSoftmax", 13, DnnlLogSoftmax);

}  // namespace parity::runtime::ops

#endif  // PARITY_HAVE_DNNL
