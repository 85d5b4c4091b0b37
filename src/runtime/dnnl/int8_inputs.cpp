#if PARITY_HAVE_DNNL

#include "runtime/dnnl/int8_inputs.h"

namespace parity::runtime::dnnl_support {

bool int8_sums_exactly() {
  static const bool exact = isa_sums_int8_exactly(effective_isa());
  return exact;
}

dnnl::memory::data_type int8_data_type(DType dtype) {
  return dtype == DType::kUInt8 ? dnnl::memory::data_type::u8 : dnnl::memory::data_type::s8;
}

std::optional<Tensor> constant_scalar_input(const KernelInit& init, size_t index) {
  if (!init.has_input(index)) return std::nullopt;
  std::optional<Tensor> t = init.constant_input(index);
  if (!t || t->numel() != 1) return std::nullopt;
  return t;
}

std::optional<Tensor> int8_weights_without_zero_point(const KernelInit& init, size_t weights_index,
                                                      size_t zero_point_index, int64_t rank) {
  std::optional<Tensor> w = init.constant_input(weights_index);
  if (!w || w->dtype() != DType::kInt8 || w->rank() != rank || w->numel() == 0) return std::nullopt;
  if (init.has_input(zero_point_index)) {
    std::optional<Tensor> zp = init.constant_input(zero_point_index);
    if (!zp || zp->dtype() != DType::kInt8) return std::nullopt;
    for (int64_t i = 0; i < zp->numel(); ++i)
      if (zp->data<int8_t>()[i] != 0) return std::nullopt;
  }
  return w;
}

}  // namespace parity::runtime::dnnl_support

#endif  // PARITY_HAVE_DNNL
