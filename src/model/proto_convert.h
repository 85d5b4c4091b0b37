// Conversions between ONNX protobuf messages and parity's core types.
#pragma once

#include <filesystem>
#include <string>

#include "core/metadata.h"
#include "core/tensor.h"
#include "model/attribute.h"

#include "model/onnx_fwd.h"

namespace parity::model {

/// Converts a TensorProto to a Tensor. Tensors with external data are mapped (not read) from base_dir
/// (the model's folder); locations escaping base_dir are refused. Throws kInvalidModel.
Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::filesystem::path& base_dir = {});
/// Writes a Tensor into a TensorProto (raw_data for numeric types, string_data for strings).
void tensor_to_proto(const Tensor& tensor, onnx::TensorProto* proto, const std::string& name = {});
/// Converts an AttributeProto (including nested graphs, which are shared, not deep-copied twice).
Attribute attribute_from_proto(const onnx::AttributeProto& proto, const std::filesystem::path& base_dir = {});
void attribute_to_proto(const Attribute& attr, onnx::AttributeProto* proto);
/// dtype + dynamic shape of a tensor-typed ValueInfo / TypeProto (kUndefined dtype if not a tensor).
TensorMeta meta_from_value_info(const onnx::ValueInfoProto& info);
TensorMeta meta_from_type(const std::string& name, const onnx::TypeProto& type);

/// Parses a serialized TensorProto (.pb files of the ONNX backend tests).
Tensor tensor_from_pb_file(const std::filesystem::path& path);

}  // namespace parity::model
