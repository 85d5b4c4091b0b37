// Concat placement at run time (runtime/rewrites/concat_placement.h plans it). The executor's
// KernelContext implements PlacedOutputs; KernelContext::allocate_output and
// allocate_output_uninitialized ask it first, so a kernel that allocates its output that way
// writes straight into the slice of the shared buffer its output was placed in. A mixin rather
// than a virtual in runtime/kernel.h, which every kernel includes.
#pragma once

#include <cstddef>
#include <optional>

#include "core/tensor.h"

namespace parity::runtime {

class PlacedOutputs {
 public:
  virtual ~PlacedOutputs() = default;
  /// The memory output `i` must occupy, when it was placed and has this dtype and shape; handed
  /// out once per node run. nullopt: allocate it as usual.
  virtual std::optional<Tensor> claim_placed_output(size_t i, DType dtype, const Shape& shape) = 0;
};

}  // namespace parity::runtime
