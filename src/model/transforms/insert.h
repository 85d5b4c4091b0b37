// Node insertion (`parity surgeon insert`): replace whatever lies between some tensors with one
// node that reads the inputs and produces the outputs.
#pragma once

#include <string>
#include <vector>

#include "model/graph.h"

namespace parity::model::transforms {

struct InsertOptions {
  std::vector<std::string> inputs;   // tensor names the node reads
  std::vector<std::string> outputs;  // tensor names the node produces (existing or new)
  std::string op;
  std::string domain;  // "" = default ONNX domain, checked against libonnx's schemas
  std::string name;    // node name; default "<op>_inserted"
  /// "key=value" attributes: ints, floats, [lists], or strings (quotes optional); the op's schema
  /// decides between int and float where it knows the attribute.
  std::vector<std::string> attrs;
};

/// Inserts the node in place. Unknown tensor names (kNotFound, near matches), unknown or malformed
/// attributes of a known op are user errors. An op the default domain does not define at the
/// model's opset is inserted with a warning (near matches named), as Polygraphy inserts it.
/// Returns whether the op's schema was known (and the node checked against it).
bool insert_node(model::Graph& graph, const InsertOptions& options);

}  // namespace parity::model::transforms
