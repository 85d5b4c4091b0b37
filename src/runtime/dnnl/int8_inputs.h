// Reading the constant inputs that decide whether an int8 ONNX node (QLinearConv, ConvInteger,
// QLinearMatMul, MatMulInteger) can run on oneDNN's int8 primitives: its scales and zero points
// must be constant scalars, and its weights constant int8 without a zero point, because oneDNN's
// convolution and matmul take no weight zero points.
#pragma once

#if PARITY_HAVE_DNNL

#include <oneapi/dnnl/dnnl.hpp>
#include <optional>

#include "core/tensor.h"
#include "runtime/dnnl/dnnl_support.h"
#include "runtime/kernel.h"

namespace parity::runtime::dnnl_support {

/// Whether oneDNN's int8 convolution and matmul sum exactly on `isa`: with VNNI (AVX512-VNNI,
/// AVX-VNNI or AMX) every u8 x s8 product is accumulated in int32. Without it oneDNN multiplies
/// with vpmaddubsw, whose pairwise int16 sums saturate (two u8 x s8 products reach 64,770), and
/// halves signed sources' weights to 7 bits: outputs measured a third off on an AVX2 CPU. The
/// int8 kernels decline there, and the layers run the exact kernels (reference, or fp32 on
/// fake-quantized operands).
constexpr bool isa_sums_int8_exactly(dnnl::cpu_isa isa) {
  return isa_includes(isa, dnnl::cpu_isa::avx512_core_vnni) || isa_includes(isa, dnnl::cpu_isa::avx2_vnni);
}

/// isa_sums_int8_exactly(effective_isa()): follows oneDNN's effective ISA, so
/// ONEDNN_MAX_CPU_ISA=AVX2 shows the fallback on any machine.
bool int8_sums_exactly();

/// oneDNN's 8-bit type for a uint8 or int8 tensor (u8 for uint8, s8 otherwise).
dnnl::memory::data_type int8_data_type(DType dtype);

/// Input `index` when the node has it and it is a constant with exactly one element.
std::optional<Tensor> constant_scalar_input(const KernelInit& init, size_t index);

/// Constant int8 weights of rank `rank` (input `weights_index`, not empty) whose zero point
/// (input `zero_point_index`, optional) is a constant int8 tensor of zeros; nullopt otherwise.
std::optional<Tensor> int8_weights_without_zero_point(const KernelInit& init, size_t weights_index,
                                                      size_t zero_point_index, int64_t rank);

}  // namespace parity::runtime::dnnl_support

#endif  // PARITY_HAVE_DNNL
