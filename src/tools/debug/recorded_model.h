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

struct RecordedModel {
  model::Model base;               // folded (unless asked not to), sorted, typed by the recording
  std::vector<TensorMap> values;   // per feed: every graph input and node output
};

/// Folds constants (with --input-shapes applied, so Shape computations fold too) unless `fold` is
/// false, sorts, makes the feeds the data-loader options ask for (`iterations` generated, or the
/// --load-inputs ones) and records every tensor on them.
RecordedModel record_model(const model::Model& model, const options::DataLoaderOptions& data, int64_t iterations,
                           bool fold);

}  // namespace parity::tools::debug
