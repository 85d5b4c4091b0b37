#include "model/shape_inference.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <map>
#include <string>

#include "core/status.h"
#include "model/mapped_load.h"
#include "model/model.h"
#include "model/schemas/newer_onnx.h"

namespace parity::model {
namespace {

using OpsetVersions = std::map<std::string, int>;

std::string normalized_domain(const std::string& domain) { return domain == "ai.onnx" ? "" : domain; }

void refuse_missing_required_attributes(const onnx::GraphProto& graph, const OpsetVersions& opsets);

void refuse_missing_required_attributes(const onnx::NodeProto& node, const OpsetVersions& opsets) {
  const std::string domain = normalized_domain(node.domain());
  const auto opset = opsets.find(domain);
  if (opset != opsets.end()) {
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), opset->second, domain);
    if (schema != nullptr) {
      for (const auto& [name, attribute] : schema->attributes()) {
        if (!attribute.required) continue;
        bool present = false;
        for (const auto& a : node.attribute()) present = present || a.name() == name;
        if (!present) {
          fail(ErrorCode::kInvalidModel, "shape inference failed: node '", node.name(), "' (", node.op_type(),
               ") lacks its required attribute '", name, "'");
        }
      }
    }
  }
  for (const auto& a : node.attribute()) {
    if (a.has_g()) refuse_missing_required_attributes(a.g(), opsets);
    for (const auto& g : a.graphs()) refuse_missing_required_attributes(g, opsets);
  }
}

void refuse_missing_required_attributes(const onnx::GraphProto& graph, const OpsetVersions& opsets) {
  for (const auto& node : graph.node()) refuse_missing_required_attributes(node, opsets);
}

// libonnx's inference functions dereference required attributes without checking that they exist
// (Scan's num_scan_inputs crashed on a fuzzed model), so a node lacking one is refused first.
void refuse_missing_required_attributes(const onnx::ModelProto& model) {
  OpsetVersions opsets;
  for (const auto& import : model.opset_import()) opsets[normalized_domain(import.domain())] = import.version();
  refuse_missing_required_attributes(model.graph(), opsets);
}

/// libonnx joins the errors of several nodes with newlines; parity's errors are one line.
std::string one_line(const char* message) {
  std::string out;
  for (const char* c = message; *c; ++c) {
    if (*c == '\n' || *c == '\r') {
      while (!out.empty() && out.back() == ' ') out.pop_back();
      if (!out.empty() && c[1] != '\0') out += "; ";
    } else {
      out += *c;
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == ';')) out.pop_back();
  return out;
}

}  // namespace

std::vector<std::string> infer_shapes(onnx::ModelProto& model, const ShapeInferenceOptions& options) {
  register_newer_onnx_schemas();
  std::vector<std::string> warnings = newer_than_library_warnings(model);
  onnx::ShapeInferenceOptions lib_options(/*check_type=*/options.strict, /*error_mode=*/options.strict ? 1 : 0,
                                          /*data_prop=*/options.data_prop);
  refuse_missing_required_attributes(model);
  try {
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), lib_options);
  } catch (const onnx::InferenceError& e) {
    fail(ErrorCode::kInvalidModel, "shape inference failed: ", one_line(e.what()));
  } catch (const std::exception& e) {
    // libonnx reports malformed models (bad attributes, unknown types) with plain exceptions.
    fail(ErrorCode::kInvalidModel, "shape inference failed: ", one_line(e.what()));
  }
  return warnings;
}

std::vector<std::string> infer_shapes(onnx::ModelProto& model, bool data_prop) {
  ShapeInferenceOptions options;
  options.data_prop = data_prop;
  return infer_shapes(model, options);
}

onnx::ModelProto copy_for_inference(const onnx::ModelProto& model) {
  constexpr size_t kKeptBytes = kMappedInitializerMinBytes;
  onnx::ModelProto copy;
  copy.set_ir_version(model.ir_version());
  *copy.mutable_opset_import() = model.opset_import();
  *copy.mutable_functions() = model.functions();
  const onnx::GraphProto& from = model.graph();
  onnx::GraphProto& graph = *copy.mutable_graph();
  graph.set_name(from.name());
  *graph.mutable_node() = from.node();
  *graph.mutable_input() = from.input();
  *graph.mutable_output() = from.output();
  *graph.mutable_value_info() = from.value_info();
  *graph.mutable_sparse_initializer() = from.sparse_initializer();
  graph.mutable_initializer()->Reserve(from.initializer_size());
  for (const auto& t : from.initializer()) {
    onnx::TensorProto* out = graph.add_initializer();
    if (t.raw_data().size() < kKeptBytes) {
      *out = t;
      continue;
    }
    out->set_name(t.name());
    out->set_data_type(t.data_type());
    *out->mutable_dims() = t.dims();
  }
  return copy;
}

onnx::ModelProto inferred_copy(const onnx::ModelProto& model, std::string* failure) {
  onnx::ModelProto inferred = copy_for_inference(model);
  try {
    onnx::shape_inference::InferShapes(inferred);
  } catch (const std::exception& e) {
    if (failure) *failure = e.what();
    inferred = copy_for_inference(model);
  }
  return inferred;
}

}  // namespace parity::model
