// Subgraph patterns and their replacement by one node (`parity plugin list|match|replace`, the
// counterpart of Polygraphy's plugin tool): a pattern is a small graph of op types with optional
// attribute constraints; every non-overlapping place the model computes it can be replaced by a
// single custom node (a plugin) that takes the pattern's inputs and produces its outputs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/attribute.h"
#include "model/graph.h"

namespace parity::model::transforms {

/// A condition on a matched node's attribute: `attr <op> value` with op one of eq, ne, lt, le, gt,
/// ge (numbers; eq/ne also strings and lists). An absent attribute fails every condition.
struct AttributeCondition {
  std::string attr;
  std::string op = "eq";
  Attribute value;
};

struct PatternNode {
  std::string name;  // the pattern's own name for the node (used in messages and "$node.attr")
  std::string op_type;
  std::string domain;                   // "" = the default ONNX domain
  std::vector<std::string> inputs;      // pattern tensor names
  std::vector<std::string> outputs;     // pattern tensor names
  std::vector<AttributeCondition> conditions;
};

/// The plugin node's attribute: a fixed value, or copied from a matched node ("$Cnode.x").
struct PluginAttribute {
  std::string name;
  Attribute value;             // when from_node is empty
  std::string from_node;       // pattern node name
  std::string from_attribute;  // its attribute
  double scale = 1.0;          // "$Cnode.x * 2": a copied number times this
};

struct SubgraphPattern {
  std::string name;    // the plugin's name
  std::string op_type;  // op of the replacing node
  std::string domain;   // its domain ("" = default)
  std::vector<std::string> inputs;   // pattern tensors bound to the graph tensors feeding the subgraph
  std::vector<std::string> outputs;  // pattern tensors bound to the graph tensors it produces
  std::vector<PatternNode> nodes;
  std::vector<PluginAttribute> attributes;
};

/// Checks a pattern's structure: nodes and at least one output, every tensor produced once, inputs
/// not produced, outputs produced, every node reachable from the outputs, $node references known.
/// kInvalidArgument naming the pattern and what is wrong.
void validate_pattern(const SubgraphPattern& pattern);

/// One place the model computes the pattern.
struct PatternMatch {
  std::vector<std::string> inputs;   // graph tensors bound to pattern.inputs, in that order
  std::vector<std::string> outputs;  // graph tensors bound to pattern.outputs, in that order
  std::vector<std::string> nodes;    // graph nodes matched, in pattern order
  AttributeMap attributes;           // the plugin node's attributes for this place
};

/// Every non-overlapping match in the top-level graph, in graph order. A match must be
/// self-contained: a tensor computed inside it and not a pattern output may not be read outside it
/// or be a graph output. Nodes need the pattern's op, domain, input and output counts and conditions.
std::vector<PatternMatch> find_pattern_matches(const Graph& graph, const SubgraphPattern& pattern);

/// Replaces the nodes between `inputs` and `outputs` (everything that computes the outputs back to
/// the inputs) by one node of op_type/domain with those inputs, outputs and attributes, then sorts
/// the graph. Unknown tensors are kNotFound; a region that reaches a graph input not listed, or
/// whose intermediate tensors are used outside it, is kInvalidArgument. Adds an opset import for a
/// new domain (version 1). Returns the number of nodes removed.
size_t replace_subgraph(Graph& graph, const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                        const std::string& op_type, const std::string& domain, const AttributeMap& attributes,
                        const std::string& node_name);

}  // namespace parity::model::transforms
