// Data-dependent shapes without an upper bound (Polygraphy's --list-unbounded-dds and
// --set-unbounded-dds-upper-bound): a Range, Pad, Resize, Tile or Expand whose size input is computed
// at run time makes its output's size depend on data, with nothing to bound it. Bounding inserts a
// Min between the size tensor and its producer.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/graph.h"

namespace parity::model::transforms {

/// The size tensors (Range's limit, Pad's pads, Resize's sizes, Tile's repeats, Expand's shape) that
/// give a node's output a new dynamic dimension while being computed at run time (produced by a node
/// other than Min; not a constant or graph input). The graph's values should carry inferred shapes
/// (graph_with_inferred_types); an output of unknown shape counts as a new dynamic dimension.
/// In graph order, each once; subgraphs are not searched.
std::vector<ValuePtr> find_unbounded_dds(const Graph& graph);

/// Upper bounds: one for every unbounded tensor, and per tensor name.
struct UpperBounds {
  std::optional<int64_t> all;
  std::map<std::string, int64_t> by_tensor;
};

/// Parses Polygraphy's `[name:]N` list; a bad number or a second default is kInvalidArgument.
UpperBounds parse_upper_bounds(const std::vector<std::string>& items, const std::string& option);

/// Bounds every unbounded tensor (find_unbounded_dds) that has a bound, and every tensor named in
/// bounds.by_tensor (bounded or not, as Polygraphy does): the producer now writes `<name>_copy` and
/// `Min(<name>_copy, <name>_upper_bound)` produces the tensor, right after the producer. The bound
/// constant has the tensor's dtype (int64 when unknown) and rank 0, or rank 1 for tensors of rank
/// 1 or more. A named tensor that does not exist is kNotFound with near matches; one that is a
/// graph input or constant is kInvalidArgument. Returns the bounds applied, by tensor.
std::map<std::string, int64_t> set_upper_bounds(Graph& graph, const UpperBounds& bounds);

}  // namespace parity::model::transforms
