// Runs the QDQ form of quantized convolutions and products on int8 kernels: DequantizeLinear
// (activation) and DequantizeLinear (constant int8 weights, and the int32 bias) -> Conv ->
// QuantizeLinear becomes one QLinearConv, which oneDNN's int8 convolution computes
// (ops/nn/quantized_conv_dnnl.cpp); the same around a MatMul with constant 2-D weights becomes one
// QLinearMatMul (ops/quantization/quantized_matmul_dnnl.cpp). As TensorRT runs explicitly
// quantized networks. int8 plans only (`convert --int8`): the fused node
// sums the integers exactly where the unfused graph rounds an fp32 sum, so an output may move by
// one quantization step.
#pragma once

#include <vector>

#include "runtime/rewrites/batch_norm_folding.h"

namespace parity::runtime {

/// Rewrites `g` and `uses` (slots each node reads, parallel to g.nodes_); returns how many nodes
/// it removed. A Conv qualifies when its input comes from a DequantizeLinear with constant scalar
/// scale and zero point, its weights from a DequantizeLinear of constant int8 weights (zero
/// points 0, per-tensor or per-output-channel scales), its bias (if any) from a DequantizeLinear
/// of a constant int32 bias whose scales are the input's times the weights', and its output's
/// only reader is a QuantizeLinear with constant scalar scale and zero point. A MatMul qualifies
/// likewise with constant 2-D int8 weights, a scalar weight scale and no bias. Dequantize nodes
/// that no other node reads are removed with the QuantizeLinear.
int fuse_qdq_layers(Subgraph& g, std::vector<std::vector<int>>& uses, const RewrittenKernelFactory& make_kernel);

}  // namespace parity::runtime
