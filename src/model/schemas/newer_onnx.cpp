#include "model/schemas/newer_onnx.h"

#include <onnx/defs/schema.h>

#include <mutex>

#include "model/schemas/schema_util.h"

namespace parity::model {

namespace {

int libonnx_opset = 0;

}  // namespace

int libonnx_newest_opset() {
  register_newer_onnx_schemas();
  return libonnx_opset;
}

void register_newer_onnx_schemas() {
  static std::once_flag once;
  std::call_once(once, [] {
    // libonnx registers its own schemas on the registry's first use; ours go after them.
    (void)onnx::OpSchemaRegistry::Schema("Relu", 1, "");
    auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
    libonnx_opset = ranges.Map().at(onnx::ONNX_DOMAIN).second;
    if (ranges.Map().at(onnx::ONNX_DOMAIN).second < kNewestOnnxOpset) {  // a libonnx that does not know them
      ranges.UpdateDomainToVersion(onnx::ONNX_DOMAIN, ranges.Map().at(onnx::ONNX_DOMAIN).first, kNewestOnnxOpset);
      if (ranges.Map().count("ai.onnx.preview") == 0) ranges.AddDomainToVersion("ai.onnx.preview", 1, 1);
      schemas::register_tensor_schemas();
      schemas::register_controlflow_schemas();
      schemas::register_quantization_schemas();
      schemas::register_math_schemas();
      schemas::register_nn_schemas();
    }
    schemas::guard_libonnx_inference();  // after ours, which it guards too
  });
}

}  // namespace parity::model
