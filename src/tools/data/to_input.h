// `parity data to-input` (Polygraphy's `data to-input`): inputs and outputs files merged into one
// inputs file, e.g. a model's inputs plus every layer output of a `mark all` run, so any subgraph
// (`surgeon extract`, `debug reduce --check ... --load-inputs`) can be fed the values the full
// model computed.
#pragma once

#include <string>
#include <vector>

#include "core/tensor_map.h"

namespace parity::tools::data {

/// The iterations a data file holds: an inputs file (Polygraphy inputs JSON, .npz, folder of
/// .npz) as it is; a RunResults JSON (`--save-outputs`) as each iteration's outputs of every
/// runner, a later runner's tensor replacing an earlier one of the same name.
std::vector<TensorMap> iterations_of(const std::string& path);

/// Iteration i of the result holds iteration i of every file that has one; a later file's tensor
/// replaces an earlier one of the same name. The result has as many iterations as the longest file.
std::vector<TensorMap> merge_iterations(const std::vector<std::vector<TensorMap>>& files);

}  // namespace parity::tools::data
