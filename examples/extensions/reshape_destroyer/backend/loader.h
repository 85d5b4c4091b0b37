// ReplaceReshapes: a loader that replaces no-op Reshape nodes (whose constant target shape equals
// the input's known shape) with Identity nodes. Like parity's own loaders it is lazy: constructing
// it does nothing, calling it loads the graph from the wrapped loader and transforms it.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <parity/model.h>

namespace reshape_destroyer {

/// Produces a graph when called (a parity-style lazy loader).
using GraphLoader = std::function<std::shared_ptr<parity::model::Graph>()>;

/// Loads an ONNX file into parity's editable graph IR when called.
GraphLoader GraphFromPath(std::string path);

class ReplaceReshapes {
 public:
  /// rename_nodes: append "_destroyed" to the name of every replaced node.
  explicit ReplaceReshapes(GraphLoader graph, bool rename_nodes = false)
      : graph_(std::move(graph)), rename_nodes_(rename_nodes) {}
  /// The graph with its no-op Reshapes replaced by Identity.
  std::shared_ptr<parity::model::Graph> operator()() const;

 private:
  GraphLoader graph_;
  bool rename_nodes_;
};

}  // namespace reshape_destroyer
