// Spec: https://onnx.ai/onnx/operators/onnx__Transpose.html
// Transpose.
#include "runtime/ops/tensor/tensor_util.h"

namespace parity::runtime {
namespace {

class TransposeKernel final : public Kernel {
 public:
  explicit TransposeKernel(const KernelInit& init) {
    if (init.has_attr("perm")) perm_ = init.attr_ints("perm");
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& data = ctx.input(0);
    const int64_t rank = data.rank();
    std::vector<int64_t> perm = perm_.value_or(std::vector<int64_t>{});
    if (!perm_) {
      for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
    }
    if (static_cast<int64_t>(perm.size()) != rank)
      ctx.fail("perm ", shape_to_string(perm), " has ", perm.size(), " entries for an input of rank ", rank);
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (int64_t p : perm) {
      if (p < 0 || p >= rank || seen[p]) ctx.fail("perm ", shape_to_string(perm), " is not a permutation of 0..", rank - 1);
      seen[p] = true;
    }
    const std::vector<int64_t> in_strides = shape_strides(data.shape());
    Shape out_shape(static_cast<size_t>(rank));
    std::vector<int64_t> src_strides(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) {
      out_shape[d] = data.shape()[perm[d]];
      src_strides[d] = in_strides[perm[d]];
    }
    Tensor& out = ctx.allocate_output(0, data.dtype(), out_shape);
    tensor_ops::visit_storage_type(data.dtype(), [&](auto tag) {
      using S = typename decltype(tag)::type;
      tensor_ops::strided_copy(tensor_ops::elements<S>(data), 0, src_strides, out_shape, tensor_ops::elements<S>(out));
    });
  }

 private:
  std::optional<std::vector<int64_t>> perm_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Transpose", 1, TransposeKernel);

}  // namespace parity::runtime
