// Building blocks for parity's schemas of the operator versions newer than the linked libonnx
// (model/schemas/newer_onnx.h): a new version of an operator derived from libonnx's previous one,
// type lists, and registration into libonnx's schema registry. Internal to model/schemas/.
#pragma once

#include <onnx/defs/schema.h>

#include <map>
#include <string>
#include <vector>

namespace parity::model::schemas {

/// The next version of `op`: libonnx's newest schema of it before `since_version` (inputs, outputs,
/// attributes, type constraints, type/shape inference and data propagation) under the new version.
/// For versions that widen types (`widen`: type parameter -> types added) or add attributes (the
/// caller adds them). Types the linked libonnx cannot represent (float4e2m1, float8e8m0, int2, uint2)
/// are left out: a model holding such a tensor does not parse with libonnx's protobuf classes.
onnx::OpSchema next_version_of(const std::string& op, int since_version,
                               const std::map<std::string, std::vector<std::string>>& widen = {});

/// Registers next_version_of(op, v) for each of `versions` in turn (each derived from the last).
void register_versions(const std::string& op, std::initializer_list<int> versions);

/// Registers `schema` in libonnx's registry (throws onnx::SchemaError on a malformed schema).
void register_schema(onnx::OpSchema&& schema);

/// tensor(float16), tensor(float), tensor(double), tensor(bfloat16).
const std::vector<std::string>& float_types();
/// The same without double: the LLM operators' activations.
const std::vector<std::string>& float_types_no_double();
/// Every tensor type except string (the types BitCast may reinterpret).
const std::vector<std::string>& non_string_tensor_types();
/// Every tensor type the linked libonnx knows.
const std::vector<std::string>& all_tensor_types();

// The families' registrations, called once by register_newer_onnx_schemas().
void register_tensor_schemas();        // tensor.cpp
void register_controlflow_schemas();   // controlflow.cpp
void register_quantization_schemas();  // quantization.cpp
void register_math_schemas();          // math.cpp
void register_nn_schemas();            // nn.cpp
/// Replaces libonnx inference functions that read past a shape on crafted input by checked ones.
void guard_libonnx_inference();        // inference_guards.cpp

}  // namespace parity::model::schemas
