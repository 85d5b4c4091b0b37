// The size check every tensor allocation makes, for allocators outside Tensor (the runtime's
// buffer pool): shapes come from models, data files and the command line, and an absurd one must be
// one clear error before any memory is asked for.
#pragma once

#include <cstddef>

#include "core/dtype.h"
#include "core/tensor.h"

namespace parity {

/// Bytes of a tensor of this dtype and shape. A size that overflows, or exceeds the machine's
/// memory or $PARITY_MAX_TENSOR_BYTES, is one kInvalidArgument line naming the shape.
size_t checked_tensor_bytes(DType dtype, const Shape& shape);

/// Caps the bytes of any one tensor from now on, for programs that run untrusted models in a
/// budget ($PARITY_MAX_TENSOR_BYTES sets the starting cap; the default is the machine's memory).
/// Returns the previous cap.
size_t set_max_tensor_bytes(size_t bytes);

}  // namespace parity
