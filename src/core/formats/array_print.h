// numpy's str(array) (array2string with its default float mode 'maxprec', precision 8,
// threshold 1000), as `inspect data --show-values` prints tensors.
#pragma once

#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace parity {

struct ArrayPrintOptions {
  int64_t edge_items = 3;   // items shown at each end of a summarized dimension; -1: all
  int64_t line_width = 75;  // characters per line; -1: break only between dimensions
  int64_t threshold = 1000; // arrays with more elements are summarized
};

/// The text numpy's str() gives for the tensor ("[[0.1 0.2]\n [0.3 0.4]]", "5.0" for a scalar).
std::string array_to_string(const Tensor& tensor, const ArrayPrintOptions& options = {});

}  // namespace parity
