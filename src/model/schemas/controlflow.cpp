// Control-flow operators after ai.onnx opset 22: If, Loop and Scan 23-25, which only widened their
// types (float4e2m1, float8e8m0, int2/uint2); the subgraph inference is libonnx's.
// Spec: https://github.com/onnx/onnx/blob/main/docs/Operators.md#If
#include "model/schemas/schema_util.h"

namespace parity::model::schemas {

void register_controlflow_schemas() {
  for (const char* op : {"If", "Loop", "Scan"}) register_versions(op, {23, 24, 25});
}

}  // namespace parity::model::schemas
