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
  kUndefined = 0,  ///< No type.
  kFloat = 1,  ///< One float (Attribute::f).
  kInt = 2,  ///< One int64 (Attribute::i).
  kString = 3,  ///< One byte string (Attribute::s).
  kTensor = 4,  ///< One tensor (Attribute::t).
  kGraph = 5,  ///< One subgraph (Attribute::g).
  kFloats = 6,  ///< A list of floats.
  kInts = 7,  ///< A list of int64s.
  kStrings = 8,  ///< A list of byte strings.
  kTensors = 9,  ///< A list of tensors.
  kGraphs = 10,  ///< A list of subgraphs.
  kSparseTensor = 11,  ///< One sparse tensor.
  kSparseTensors = 12,  ///< A list of sparse tensors.
  kTypeProto = 13,  ///< One type proto.
  kTypeProtos = 14,  ///< A list of type protos.
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
