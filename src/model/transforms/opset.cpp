#include "model/transforms/opset.h"

#include <onnx/onnx_pb.h>
#include <onnx/version_converter/convert.h>

#include <set>
#include <vector>

#include "core/logger.h"
#include "model/checker.h"
#include "model/external_data.h"
#include "model/schemas/newer_onnx.h"

namespace parity::model::transforms {

namespace {

constexpr int64_t kDetachBytes = 1024;

int64_t tensor_bytes(const onnx::TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= d;
  return n * static_cast<int64_t>(dtype_size(static_cast<DType>(t.data_type())));
}

}  // namespace

void convert_opset(model::Model& model, int64_t target_opset) {
  const int64_t current = model.opset("");
  PARITY_CHECK(current > 0, kInvalidModel, "the model imports no default-domain opset to convert from");
  // parity's schemas after libonnx's newest opset come without version-converter adapters.
  const int64_t newest = model::libonnx_newest_opset();
  PARITY_CHECK(target_opset >= 1 && target_opset <= newest, kInvalidArgument, "--opset ", target_opset,
               " is outside what libonnx's version converter supports (1..", newest, ")");
  if (current == target_opset) return;

  // The converter copies every tensor through its own IR and knows nothing of external data, so
  // large floating weights are swapped for graph inputs of the same type while it runs.
  onnx::GraphProto& graph = *model.proto().mutable_graph();
  std::vector<onnx::TensorProto> detached;  // in reverse file order
  std::vector<std::string> added_inputs;
  std::set<std::string> input_names;
  for (const auto& in : graph.input()) input_names.insert(in.name());
  auto* initializers = graph.mutable_initializer();
  for (int i = initializers->size() - 1; i >= 0; --i) {
    onnx::TensorProto& t = initializers->at(i);
    const bool big = model::has_external_data(t) || tensor_bytes(t) >= kDetachBytes;
    if (!big || t.data_type() == onnx::TensorProto::STRING) continue;
    if (!input_names.count(t.name())) {
      auto* info = graph.add_input();
      info->set_name(t.name());
      auto* tt = info->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(t.data_type());
      auto* shape = tt->mutable_shape();
      for (int64_t d : t.dims()) shape->add_dim()->set_dim_value(d);
      added_inputs.push_back(t.name());
    }
    detached.push_back(std::move(t));
    initializers->DeleteSubrange(i, 1);
  }

  onnx::ModelProto converted;
  try {
    converted = onnx::version_conversion::ConvertVersion(model.proto(), static_cast<int>(target_opset));
  } catch (const std::exception& e) {
    fail(ErrorCode::kUnsupported, "libonnx's version converter cannot convert this model from opset ", current, " to ",
         target_opset, ": ", e.what());
  }

  onnx::GraphProto& out = *converted.mutable_graph();
  std::set<std::string> added(added_inputs.begin(), added_inputs.end());
  auto* inputs = out.mutable_input();
  for (int i = inputs->size() - 1; i >= 0; --i)
    if (added.count(inputs->at(i).name())) inputs->DeleteSubrange(i, 1);
  for (auto it = detached.rbegin(); it != detached.rend(); ++it) *out.add_initializer() = std::move(*it);
  model.proto() = std::move(converted);
}

void check_saved_model(const std::filesystem::path& path) {
  for (const auto& w : model::check_model_file(path)) logger().warning(path.string(), ": ", w);
}

}  // namespace parity::model::transforms
