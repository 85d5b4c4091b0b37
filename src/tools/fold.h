// Graph sanitizing (`parity surgeon sanitize`): constant folding with parity's own runtime,
// Shape folding once shapes are static, input-shape overrides, cleanup and toposort.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>

#include "model/graph.h"
#include "model/model.h"

namespace parity::tools {

struct FoldOptions {
  /// Folding passes; each pass turns Constant nodes into constants, folds Shape/Size of static
  /// shapes, and evaluates nodes whose inputs are all constant. Stops early when a pass changes
  /// nothing.
  int num_passes = 0;  // 0 = until nothing changes (at most 64)
  /// Folded tensors larger than this stay computed at run time (e.g. a Tile that would bloat the file).
  size_t size_threshold = std::numeric_limits<size_t>::max();
  /// Fold Shape/Size nodes whose input shape is static.
  bool fold_shapes = true;
  /// Refresh types with shape inference before every pass (else only before the first), like
  /// Polygraphy's default; --no-per-pass-shape-inference turns it off.
  bool per_pass_shape_inference = true;
};

struct FoldReport {
  size_t nodes_before = 0;
  size_t nodes_after = 0;
  size_t constant_nodes = 0;  // Constant nodes turned into initializers
  size_t shape_nodes = 0;     // Shape/Size nodes folded
  size_t evaluated = 0;       // values computed by the runtime
  int passes = 0;
};

/// Sets graph input shapes (name -> shape). A tensor that is not a graph input is ignored with a
/// warning, as Polygraphy does; a name that is no tensor at all throws kNotFound with near matches.
void override_input_shapes(model::Graph& graph, const std::map<std::string, DimShape>& shapes);

/// override_input_shapes, then forgets the shapes of intermediate values (they may contradict the
/// new input shapes); run shape inference afterwards to get them back.
void reshape_inputs(model::Graph& graph, const std::map<std::string, DimShape>& shapes);

/// Turns Constant nodes of the main graph into initializers; returns how many.
size_t lower_constant_nodes(model::Graph& graph);

/// Folds constants in the model, returning the new graph (types refreshed by shape inference).
std::shared_ptr<model::Graph> fold_constants(const model::Model& model, const FoldOptions& options, FoldReport* report,
                                          const std::map<std::string, DimShape>& input_shapes = {});

}  // namespace parity::tools
