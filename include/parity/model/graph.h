// parity's editable graph IR (in the spirit of onnx-graphsurgeon): values (variables and
// constants), nodes, graphs with nested subgraphs. Surgeon and debug tools cut and rewire graphs
// here, then export back to a ModelProto.
//
// Links go one way: nodes hold shared_ptrs to their input/output Values; who produces or consumes
// a Value is computed on demand (producers(), consumers()), so rewiring is a plain assignment
// (node->inputs[0] = other_value) with nothing to keep in sync.
//
// Export is lossless: every object remembers the proto it came from, and what was not edited is
// written back exactly (doc strings, value_info, metadata, attribute order, tensor encodings).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/metadata.h"
#include "core/tensor.h"
#include "model/attribute.h"
#include "model/model.h"

#include "model/onnx_fwd.h"

namespace parity::model {

class Graph;

/// A tensor flowing through a graph: a Variable (graph input or node output) or a Constant
/// (weights; initializers). Constants load their values lazily: weights stored as external data are
/// mapped only when values() is first called.
class Value {
 public:
  /// A variable; dtype kUndefined and unknown rank when the type is not known.
  explicit Value(std::string name, DType dtype = DType::kUndefined, DimShape shape = unknown_shape());
  /// A constant holding values.
  static std::shared_ptr<Value> constant(std::string name, Tensor values);
  /// A shared variable (see the constructor).
  static std::shared_ptr<Value> variable(std::string name, DType dtype = DType::kUndefined,
                                         DimShape shape = unknown_shape());
  ~Value();

  std::string name;  ///< Tensor name, unique within the model.
  DType dtype = DType::kUndefined;  ///< Element type; kUndefined when unknown.
  DimShape shape;  ///< Shape; unknown rank when not known.
  std::string doc_string;  ///< Documentation string from the model.

  bool is_constant() const { return constant_; }  ///< True for a constant (values known: an initializer or set_values()).
  bool is_variable() const { return !constant_; }  ///< True for a graph input or node output.
  /// True when dtype or shape is known.
  bool has_type() const { return dtype != DType::kUndefined || !shape.unknown_rank; }
  /// Type as TensorMeta (name, dtype, shape).
  TensorMeta meta() const { return TensorMeta{name, dtype, shape}; }

  /// Values of a constant (throws kInvalidArgument for variables). Loaded on first use.
  const Tensor& values() const;
  /// Makes this value a constant with these values (dtype and shape follow them).
  void set_values(Tensor values);
  /// Makes this value a variable (drops values, keeps dtype and shape).
  void to_variable();
  /// Byte size of a constant's values, known without loading them.
  size_t constant_bytes() const;
  /// True for constants whose values live in an external-data file.
  bool is_external() const;
  /// True once a constant's values have been materialized (for tests of lazy loading).
  bool values_loaded() const { return loaded_; }

  /// A shape of unknown rank, the default for values without type information.
  static DimShape unknown_shape() {
    DimShape s;
    s.unknown_rank = true;
    return s;
  }

 private:
  friend struct GraphIo;
  bool constant_ = false;
  mutable bool loaded_ = false;
  mutable Tensor values_;
  // Where a constant's values still are (TensorProto, maybe external) until first use.
  std::shared_ptr<const onnx::TensorProto> source_tensor_;
  std::filesystem::path base_dir_;
  // The ValueInfoProto this value's type came from, and the type as it was parsed; export writes
  // the original back while dtype/shape are unchanged.
  std::shared_ptr<const onnx::ValueInfoProto> source_info_;
  DType source_dtype_ = DType::kUndefined;
  DimShape source_shape_;
};

/// Shared handle to a Value; nodes and graphs hold these.
using ValuePtr = std::shared_ptr<Value>;

/// One operator invocation.
class Node {
 public:
  Node() = default;  ///< An empty node (no op type, no inputs or outputs).
  /// A node of `op_type` in the default domain with these inputs and outputs.
  Node(std::string op_type, std::vector<ValuePtr> inputs, std::vector<ValuePtr> outputs, std::string name = {});
  ~Node();

  std::string name;  ///< Node name; may be empty.
  std::string op_type;  ///< Operator, e.g. "Conv".
  std::string domain;  ///< "" = the default ONNX domain
  std::string doc_string;  ///< Documentation string from the model.
  /// nullptr marks an omitted optional input/output ("" in ONNX).
  std::vector<ValuePtr> inputs;
  std::vector<ValuePtr> outputs;  ///< Produced values; nullptr marks an omitted optional output.
  /// Attributes. Graph-valued ones (If/Loop/Scan bodies) have g == nullptr here: their editable
  /// form is in subgraphs.
  AttributeMap attrs;
  std::map<std::string, std::shared_ptr<Graph>> subgraphs;  ///< Editable subgraphs of graph-valued attributes, by attribute name.

  /// "name (Op)" or "<Op #index>"-like label for messages.
  std::string label() const;
  /// Attributes added since loading that are written in this order (as a user gave them), right
  /// after the loaded ones; other added attributes follow by name.
  std::vector<std::string> added_attribute_order;
  /// Names of attrs and subgraphs in the order the model lists them; attributes added since
  /// loading follow (added_attribute_order first, the rest by name).
  std::vector<std::string> attribute_order() const;

 private:
  friend struct GraphIo;
  // The original node (attributes only, graphs stripped) for lossless export of unedited attributes.
  std::shared_ptr<const onnx::NodeProto> source_;
};

/// Shared handle to a Node.
using NodePtr = std::shared_ptr<Node>;

/// Model-level fields (top-level graph only).
struct ModelInfo {
  int64_t ir_version = 0;  ///< ONNX IR version.
  std::vector<std::pair<std::string, int64_t>> opset_imports;  ///< (domain, version), in file order
  std::string producer_name;  ///< Producer name as the model records it.
  std::string producer_version;  ///< Producer version as the model records it.
  std::string domain;  ///< Model domain.
  int64_t model_version = 0;  ///< Model version.
  std::string doc_string;  ///< Model documentation string.
  std::vector<std::pair<std::string, std::string>> metadata_props;  ///< metadata_props (key, value) pairs in file order.
};

/// A graph (the model's main graph or a subgraph). Non-copyable: objects are shared by pointer.
class Graph {
 public:
  Graph();  ///< An empty graph.
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&&) noexcept;  ///< Moves the graph's contents.
  Graph& operator=(Graph&&) noexcept;  ///< Moves the graph's contents.

  std::string name;  ///< Graph name.
  std::string doc_string;  ///< Documentation string from the model.
  std::vector<NodePtr> nodes;  ///< Nodes in file order (or topological order after toposort()).
  std::vector<ValuePtr> inputs;  ///< Graph inputs in order.
  std::vector<ValuePtr> outputs;  ///< Graph outputs in order.
  /// Constants stored in this graph (ONNX initializers), in file order. Old models also list
  /// some of them in inputs.
  std::vector<ValuePtr> initializers;
  /// Values whose types the file records in value_info, in file order. Export writes these, then
  /// any other typed intermediate value.
  std::vector<ValuePtr> value_info;
  /// Model-level fields; meaningful on the top-level graph.
  ModelInfo model;
  /// Folder external data is relative to.
  std::filesystem::path base_dir;
  /// The model was loaded without its external data (Model::external_data_ignored); kept on export.
  bool external_data_ignored = false;

  /// Builds the IR from a model. Throws kInvalidModel on structurally broken models.
  static std::shared_ptr<Graph> from_model(const model::Model& model);
  /// Exports back to a model (base_dir carried along so external data still resolves).
  model::Model to_model() const;

  /// Opset of a domain from model.opset_imports ("" / "ai.onnx" = default); 0 when absent.
  int64_t opset(const std::string& domain = "") const;

  /// Sorts nodes so every node follows its producers (stable: a sorted graph keeps its order).
  /// Subgraphs are sorted too. A cycle throws kInvalidModel naming the nodes in it.
  void toposort();
  /// Nodes of one cycle in this graph (producer before consumer), empty when the graph is acyclic.
  std::vector<NodePtr> find_cycle() const;
  /// Removes nodes and initializers that contribute to no graph output (and, optionally, unused
  /// graph inputs). Subgraphs are cleaned too when recurse is set.
  void cleanup(bool remove_unused_inputs = false, bool recurse = true);

  /// Value by name in this graph (not subgraphs); nullptr when absent.
  ValuePtr find_tensor(const std::string& name) const;
  /// Like find_tensor but throws kNotFound, suggesting near-matching names.
  ValuePtr tensor(const std::string& name) const;
  /// Every value used or defined in this graph, by name (subgraph values when recurse is set).
  std::map<std::string, ValuePtr> tensors(bool recurse = false) const;
  /// Node producing each value (first producer when a broken model has several).
  std::unordered_map<const Value*, Node*> producers() const;
  /// Nodes of this graph consuming each value, including nodes whose subgraphs use it.
  std::unordered_map<const Value*, std::vector<Node*>> consumers() const;
  /// Values a subgraph uses from enclosing graphs (not defined inside it, recursively).
  std::vector<ValuePtr> outer_references() const;
  /// Total number of nodes including nested subgraphs.
  size_t node_count(bool recurse = true) const;

 private:
  friend struct GraphIo;
  // Fields of the original GraphProto / ModelProto the IR does not model (sparse initializers,
  // quantization annotations, functions, training info) and presence of optional fields.
  std::shared_ptr<const onnx::GraphProto> source_graph_;
  std::shared_ptr<const onnx::ModelProto> source_model_;
};

/// Names close to `name` (edit distance), best first, for "did you mean" messages.
std::vector<std::string> near_matches(const std::string& name, const std::vector<std::string>& candidates,
                                      size_t limit = 3);

}  // namespace parity::model
