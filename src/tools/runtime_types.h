// Finding tensor types by running the model in parity's own runtime (the fallback of `auto`
// fields when shape inference cannot tell).
#pragma once

#include <string>
#include <vector>

#include "core/metadata.h"
#include "model/graph.h"
#include "model/model.h"

namespace parity::tools {

/// Runs the model on generated inputs (Polygraphy's default data: seed 1, dynamic dims 1) and
/// returns the dtypes and observed shapes of the named tensors. Errors of the run propagate.
TensorMetadata resolve_types_by_running(const model::Model& model, const std::vector<std::string>& names);

/// Polygraphy's --force-fallback-shape-inference: runs the graph's model once and sets the dtype
/// and observed shape of every graph input (the shapes it ran with: dynamic dims 1) and of every
/// value its main-graph nodes produce (what shape inference would otherwise give). Returns how
/// many values were set.
size_t set_types_by_running(model::Graph& graph);

/// Marks the graph's outputs as Polygraphy's --outputs/--exclude-outputs do (model::transforms::
/// mark_outputs); outputs whose dtype shape inference left unknown (mark all on a model inference
/// cannot follow) get it from a run with parity's runtime, since libonnx requires one.
void mark_outputs_typed(model::Graph& graph, const std::vector<std::string>& outputs,
                        const std::vector<std::string>& exclude);

}  // namespace parity::tools
