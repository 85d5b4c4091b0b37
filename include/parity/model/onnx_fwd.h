// The libonnx protobuf classes parity's headers name, declared without libonnx's headers.
// parity's libonnx is built in the C++ namespace `onnx_parity` (cmake/ParityOnnx.cmake explains
// why: LibTorch brings Debian's older libonnx, namespace `onnx`, into the same process); parity's
// code calls it `onnx`, through the alias below. The build force-includes this header wherever
// libonnx's headers are used, so `onnx::ModelProto` works after any `#include <onnx/...>` too.
#pragma once

namespace onnx_parity {
class AttributeProto;
class FunctionProto;
class GraphProto;
class ModelProto;
class NodeProto;
class TensorProto;
class TypeProto;
class ValueInfoProto;
}  // namespace onnx_parity

namespace onnx = onnx_parity;
