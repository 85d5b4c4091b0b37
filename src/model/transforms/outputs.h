// Choosing a model's outputs the way Polygraphy's --outputs / --exclude-outputs do: named tensors,
// or `mark all` for every tensor a node produces, minus the excluded ones.
#pragma once

#include <string>
#include <vector>

#include "model/graph.h"

namespace parity::model::transforms {

/// True for Polygraphy's spelling of "every tensor": the two words `mark all`.
bool is_mark_all(const std::vector<std::string>& outputs);

/// Sets graph.outputs to `outputs` (empty: keeps the current ones; `mark all`: every value the
/// main graph's nodes produce, in node order), then drops those named in `exclude`. Unknown names
/// throw kNotFound with near matches, naming the option.
void mark_outputs(model::Graph& graph, const std::vector<std::string>& outputs, const std::vector<std::string>& exclude);

}  // namespace parity::model::transforms
