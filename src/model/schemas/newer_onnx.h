// parity's schemas for the ONNX operator versions newer than the linked libonnx (ONNX 1.17: ai.onnx
// opset 22), up to ONNX 1.23 (ai.onnx opset 28, ai.onnx.preview 1): the new operators (Attention,
// RMSNormalization, RotaryEmbedding, Swish, TensorScatter, BitCast, CumProd, LinearAttention,
// CausalConvWithState, SwiGLU, FlexAttention) and the new versions of existing ones, each with
// type and shape inference, registered into libonnx's own schema registry so that its checker,
// shape inference and every schema lookup in parity see them.
#pragma once

namespace parity::model {

/// The newest ai.onnx opset parity's schemas cover (ONNX 1.23).
inline constexpr int kNewestOnnxOpset = 28;

/// Registers the schemas once (thread-safe, idempotent). load_model, the checker and shape
/// inference call it; code that looks schemas up before loading a model calls it first.
void register_newer_onnx_schemas();

/// The newest ai.onnx opset libonnx itself has schemas (and version-converter adapters) for: 22.
int libonnx_newest_opset();

}  // namespace parity::model
