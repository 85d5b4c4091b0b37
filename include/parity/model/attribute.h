// Node attributes in parity's own types (no protobuf in this header), shared by the graph IR and
// the runtime's kernels.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"

#include "model/onnx_fwd.h"

namespace parity::model {

/// Values match onnx::AttributeProto::AttributeType.
enum class AttrType : int {
  kUndefined = 0,
  kFloat = 1,
  kInt = 2,
  kString = 3,
  kTensor = 4,
  kGraph = 5,
  kFloats = 6,
  kInts = 7,
  kStrings = 8,
  kTensors = 9,
  kGraphs = 10,
  kSparseTensor = 11,
  kSparseTensors = 12,
  kTypeProto = 13,
  kTypeProtos = 14,
};

/// Lower-case name of the type for messages ("float", "ints", ...).
const char* attr_type_name(AttrType type);

/// A node attribute of any ONNX attribute type.
struct Attribute {
  std::string name;  ///< Attribute name.
  AttrType type = AttrType::kUndefined;  ///< Which of the value fields below holds the value.
  float f = 0.0f;  ///< Value of a kFloat attribute.
  int64_t i = 0;  ///< Value of a kInt attribute.
  std::string s;  ///< bytes; may hold non-UTF-8 data
  Tensor t;  ///< Value of a kTensor attribute.
  std::shared_ptr<const onnx::GraphProto> g;  ///< subgraph (If/Loop/Scan bodies)
  std::vector<float> floats;  ///< Value of a kFloats attribute.
  std::vector<int64_t> ints;  ///< Value of a kInts attribute.
  std::vector<std::string> strings;  ///< Value of a kStrings attribute.
  std::vector<Tensor> tensors;  ///< Value of a kTensors attribute.
  std::vector<std::shared_ptr<const onnx::GraphProto>> graphs;  ///< Value of a kGraphs attribute.
  std::string ref_attr_name;  ///< set inside function bodies
  std::string doc_string;  ///< Documentation string from the model.
};

/// A node's attributes by name.
using AttributeMap = std::map<std::string, Attribute>;

}  // namespace parity::model
