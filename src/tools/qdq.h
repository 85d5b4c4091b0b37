// Explicitly quantized (QDQ) ONNX models: writing parity's calibration as QuantizeLinear /
// DequantizeLinear pairs that any runtime loads (ONNX Runtime, TensorRT), and reading such a model
// back into parity's int8 layers with its own scales.
//
// The form written is the one TensorRT's explicit quantization and ModelOpt's int8 ONNX export use:
// - every activation input of a Conv, ConvTranspose, MatMul or Gemm gets one
//   QuantizeLinear -> DequantizeLinear pair (per tensor, int8, zero point 0, scale = the calibrated
//   amax / 127), shared by every quantized reader of that tensor;
// - constant float weights become int8 initializers with per-channel symmetric scales and a
//   DequantizeLinear with `axis` (Conv: 0, ConvTranspose: 1, Gemm: 0 with transB else 1,
//   MatMul: the last axis), the channels parity's int8 kernels scale by;
// - biases and every other op stay float32 (TensorRT fuses the float bias into its epilogue).
// Opset 13 is the first with per-axis DequantizeLinear; older models are converted to it first.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "model/model.h"

namespace parity::tools {

/// What export_qdq changed.
struct QdqExportReport {
  int layers = 0;            // Conv/ConvTranspose/MatMul/Gemm nodes with quantized inputs
  int activation_pairs = 0;  // QuantizeLinear/DequantizeLinear pairs on activations
  int weights = 0;           // constant weights stored as int8 with per-channel scales
  int skipped_layers = 0;    // layers left in float: their activation had no (positive) calibrated range
};

/// Rewrites `model` (weights relative to its base_dir) into the QDQ form above with the activation
/// `scales` (tensor name -> amax / 127, tools/calibration.h). Tensors that never left zero or have
/// no range leave their layer in float (counted in skipped_layers).
QdqExportReport export_qdq(model::Model& model, const std::map<std::string, float>& scales);

/// True when the model's main graph has a QuantizeLinear or DequantizeLinear node.
bool has_qdq_nodes(const model::Model& model);

/// Throws kInvalidArgument, naming the node and the model, for a QuantizeLinear or
/// DequantizeLinear whose constant scale is zero, negative, infinite or NaN (anywhere in the model,
/// subgraphs included). `model_name` is the file the message names.
void check_qdq_scales(const model::Model& model, const std::string& model_name);

/// A QDQ model read back as a float model plus its activation scales.
struct QdqImport {
  std::map<std::string, float> scales;  // activation tensor -> the scale of its QuantizeLinear
  int activation_pairs = 0;
  int weights = 0;
};

/// Removes the QDQ form from `model` when all of it is symmetric int8 (zero points 0): each
/// activation pair folds into the scale of the tensor it quantized, each constant DequantizeLinear
/// becomes the float initializer it computes (exactly the values the int8 layer quantizes back to).
/// nullopt, and `model` untouched, when the model has no QDQ nodes or some pair is not of that form
/// (uint8 or nonzero zero points, run-time scales): the runtime then runs those nodes as they are.
std::optional<QdqImport> import_qdq(model::Model& model);

}  // namespace parity::tools
