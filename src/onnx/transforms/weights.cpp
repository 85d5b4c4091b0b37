#include "onnx/transforms/weights.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <random>
#include <unordered_set>

#include "core/tensor.h"
#include "onnx/external_data.h"
#include "onnx/transforms/proto_walk.h"

namespace parity::transforms {

namespace {

int64_t element_count(const onnx::TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= d;
  return n;
}

bool is_float_type(int data_type) {
  return data_type == onnx::TensorProto::FLOAT || data_type == onnx::TensorProto::FLOAT16 ||
         data_type == onnx::TensorProto::DOUBLE || data_type == onnx::TensorProto::BFLOAT16;
}

bool has_values(const onnx::TensorProto& t) {
  if (onnx_io::has_external_data(t)) return !onnx_io::is_weightless(t);
  return !t.raw_data().empty() || t.float_data_size() || t.int32_data_size() || t.int64_data_size() ||
         t.double_data_size() || t.uint64_data_size() || t.string_data_size();
}

// Polygraphy joins the model's doc_string and the marker with '-'.
void mark_model_weightless(onnx::ModelProto& model) {
  if (model.doc_string().find(kWeightlessMarker) != std::string::npos) return;
  model.set_doc_string(model.doc_string().empty() ? std::string(kWeightlessMarker)
                                                  : model.doc_string() + "-" + kWeightlessMarker);
}

void unmark_model_weightless(onnx::ModelProto& model) {
  std::string doc = model.doc_string();
  const size_t at = doc.find(kWeightlessMarker);
  if (at == std::string::npos) return;
  size_t begin = at, end = at + std::string(kWeightlessMarker).size();
  if (begin > 0 && doc[begin - 1] == '-') --begin;
  doc.erase(begin, end - begin);
  model.set_doc_string(doc);
}

void clear_values(onnx::TensorProto& t) {
  t.clear_raw_data();
  t.clear_float_data();
  t.clear_int32_data();
  t.clear_int64_data();
  t.clear_double_data();
  t.clear_uint64_data();
  t.clear_string_data();
  t.clear_external_data();
  t.clear_data_location();
}

// Tensors a BatchNormalization uses as scale or variance (initializers, or the values of the
// Constant nodes feeding it): random values there must be positive or the rebuilt model produces NaNs.
std::unordered_set<const onnx::TensorProto*> positive_tensors(onnx::ModelProto& model) {
  std::unordered_set<std::string> names;
  for_each_node(*model.mutable_graph(), [&](onnx::NodeProto& node) {
    if (node.op_type() != "BatchNormalization") return;
    for (int i : {1, 4})
      if (node.input_size() > i) names.insert(node.input(i));
  });
  std::unordered_set<const onnx::TensorProto*> tensors;
  for (const auto& t : model.graph().initializer())
    if (names.count(t.name())) tensors.insert(&t);
  for_each_node(*model.mutable_graph(), [&](onnx::NodeProto& node) {
    if (node.op_type() != "Constant" || node.output_size() != 1 || !names.count(node.output(0))) return;
    for (const auto& attr : node.attribute())
      if (attr.has_t()) tensors.insert(&attr.t());
  });
  return tensors;
}

}  // namespace

StripReport strip_weights(onnx_io::Model& model, const StripOptions& options) {
  StripReport report;
  for_each_dense_tensor(model.proto(), [&](onnx::TensorProto& t) {
    if (!is_float_type(t.data_type()) || !has_values(t)) return;
    const uint64_t bytes = static_cast<uint64_t>(element_count(t)) * dtype_size(static_cast<DType>(t.data_type()));
    if (bytes < options.size_threshold) return;
    clear_values(t);
    t.set_raw_data(std::string());  // present but empty, as Polygraphy writes it
    t.set_doc_string(kWeightlessDocString);
    ++report.stripped_tensors;
    report.stripped_bytes += bytes;
  });
  if (report.stripped_tensors) mark_model_weightless(model.proto());
  return report;
}

size_t reference_weightless_file(onnx_io::Model& model, const std::string& location) {
  size_t count = 0;
  for_each_dense_tensor(model.proto(), [&](onnx::TensorProto& t) {
    if (!onnx_io::is_weightless(t)) return;
    clear_values(t);
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    auto* entry = t.add_external_data();
    entry->set_key("location");
    entry->set_value(location);
    ++count;
  });
  return count;
}

std::vector<std::string> weightless_locations(const onnx_io::Model& model) {
  std::vector<std::string> locations;
  for_each_dense_tensor(const_cast<onnx::ModelProto&>(model.proto()), [&](onnx::TensorProto& t) {
    if (!onnx_io::is_weightless(t) || !onnx_io::has_external_data(t)) return;
    const std::string location = onnx_io::parse_external_data(t).location;
    if (std::find(locations.begin(), locations.end(), location) == locations.end()) locations.push_back(location);
  });
  return locations;
}

ReconstructReport reconstruct_weights(onnx_io::Model& model, uint64_t seed) {
  ReconstructReport report;
  const auto positive = positive_tensors(model.proto());
  std::mt19937_64 gen(seed);
  for_each_dense_tensor(model.proto(), [&](onnx::TensorProto& t) {
    const bool marked = t.doc_string().find(kWeightlessMarker) != std::string::npos;
    const int64_t numel = element_count(t);
    // A marked tensor with values was rebuilt already (Polygraphy's reconstruction keeps the marker).
    if (has_values(t) || numel == 0) return;
    const auto dtype = static_cast<DType>(t.data_type());
    PARITY_CHECK(is_float_type(t.data_type()), kUnsupported, "tensor '", t.name(), "' has no values and dtype ",
                 dtype_name(dtype), "; only floating-point weights can be reconstructed");
    const bool is_positive = positive.count(&t) > 0;
    std::uniform_real_distribution<float> dist(is_positive ? 0.5f : -0.1f, is_positive ? 1.5f : 0.1f);
    Tensor values(DType::kFloat32, Shape(t.dims().begin(), t.dims().end()));
    for (float& v : values.values<float>()) v = dist(gen);
    if (dtype != DType::kFloat32) values = values.cast(dtype);
    clear_values(t);
    t.set_raw_data(values.raw_data(), values.size_bytes());
    if (marked) t.clear_doc_string();
    ++report.reconstructed_tensors;
    report.reconstructed_bytes += values.size_bytes();
  });
  if (report.reconstructed_tensors) unmark_model_weightless(model.proto());
  return report;
}

}  // namespace parity::transforms
