#include "model/schemas/schema_util.h"

#include <algorithm>

#include "core/status.h"

namespace parity::model::schemas {

onnx::OpSchema next_version_of(const std::string& op, int since_version,
                               const std::map<std::string, std::vector<std::string>>& widen) {
  const onnx::OpSchema* base = onnx::OpSchemaRegistry::Schema(op, since_version - 1, "");
  PARITY_CHECK(base != nullptr, kInternal, "no libonnx schema of '", op, "' before version ", since_version);
  // The new version keeps the location of ONNX's definition it extends: reports group operators
  // by the onnx/defs/<family>/ folder their schema comes from.
  onnx::OpSchema schema(base->Name(), base->file(), base->line());
  schema.SetDomain(base->domain()).SinceVersion(since_version).SetDoc(base->doc() ? base->doc() : "");
  for (size_t i = 0; i < base->inputs().size(); ++i) schema.Input(static_cast<int>(i), base->inputs()[i]);
  for (size_t i = 0; i < base->outputs().size(); ++i) schema.Output(static_cast<int>(i), base->outputs()[i]);
  for (const auto& [name, attribute] : base->attributes()) schema.Attr(attribute);
  for (const auto& constraint : base->typeConstraintParams()) {
    std::vector<std::string> types = constraint.allowed_type_strs;
    if (auto it = widen.find(constraint.type_param_str); it != widen.end())
      for (const auto& t : it->second)
        if (std::find(types.begin(), types.end(), t) == types.end()) types.push_back(t);
    schema.TypeConstraint(constraint.type_param_str, types, constraint.description);
  }
  if (base->GetTypeAndShapeInferenceFunction()) schema.TypeAndShapeInferenceFunction(base->GetTypeAndShapeInferenceFunction());
  if (base->GetDataPropagationFunction()) schema.PartialDataPropagationFunction(base->GetDataPropagationFunction());
  return schema;
}

void register_versions(const std::string& op, std::initializer_list<int> versions) {
  for (int version : versions) register_schema(next_version_of(op, version));
}

void register_schema(onnx::OpSchema&& schema) {
  onnx::OpSchemaRegistry::OpSchemaRegisterOnce::OpSchemaRegisterImpl(std::move(schema));
}

const std::vector<std::string>& float_types() {
  static const std::vector<std::string> types = {"tensor(float16)", "tensor(float)", "tensor(double)", "tensor(bfloat16)"};
  return types;
}

const std::vector<std::string>& float_types_no_double() {
  static const std::vector<std::string> types = {"tensor(float16)", "tensor(float)", "tensor(bfloat16)"};
  return types;
}

const std::vector<std::string>& non_string_tensor_types() {
  static const std::vector<std::string> types = [] {
    std::vector<std::string> out;
    for (const auto& t : all_tensor_types())
      if (t != "tensor(string)") out.push_back(t);
    return out;
  }();
  return types;
}

const std::vector<std::string>& all_tensor_types() {
  // libonnx's list for IR 10 (every data type up to int4/uint4).
  return onnx::OpSchema::all_tensor_types_ir10();
}

}  // namespace parity::model::schemas
