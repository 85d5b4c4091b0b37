// The starting point of the debug tools that cut models (`debug reduce`, `inspect capability`):
// the model folded and sorted, run once on parity's runtime with every tensor recorded, so any
// cut can be typed and fed with the values the full model produced.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor_map.h"
#include "model/model.h"
#include "options/data_loader_args.h"
#include "tools/debug/subgraph_cut.h"

namespace parity::tools::debug {

/// What is folded before recording.
enum class Folding {
  kNone,
  /// Constant nodes become initializers (Polygraphy's debug reduce lowers them so their values
  /// never become cut inputs); everything else stays as it is.
  kConstantNodes,
  /// Every constant-computable node, with the input shapes applied (so Shape computations fold too).
  kAll,
};

struct RecordedModel {
  model::Model base;               // folded (unless asked not to), sorted, typed by the recording
  std::vector<TensorMap> values;   // per feed: every graph input and node output
};

/// Folds as asked (the input shapes of `data` applied), sorts, makes the feeds the data-loader
/// options ask for (`iterations` generated, or the --load-inputs ones, cast to the inputs' float
/// types) and records every tensor on them.
RecordedModel record_model(const model::Model& model, const options::DataLoaderOptions& data, int64_t iterations,
                           Folding folding);

}  // namespace parity::tools::debug
