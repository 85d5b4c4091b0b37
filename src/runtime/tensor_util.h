// Axis-wise tensor copies shared by the control-flow and sequence kernels (any dtype, strings too).
#pragma once

#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace parity::runtime {

/// Concatenates tensors along axis (shapes must agree elsewhere; dtypes must match).
/// Throws kRuntime with `what` in the message, and `where` in the error's fields, on a mismatch.
Tensor concat_tensors(const std::vector<Tensor>& items, int64_t axis, const std::string& what,
                      const ErrorContext& where = {});
/// Stacks equally shaped tensors along a new axis (0 <= axis <= rank).
Tensor stack_tensors(const std::vector<Tensor>& items, int64_t axis, const std::string& what,
                     const ErrorContext& where = {});
/// The sub-tensor [start, start + length) along axis.
Tensor slice_axis(const Tensor& t, int64_t axis, int64_t start, int64_t length);
/// slice_axis(t, axis, index, 1) with the axis removed.
Tensor take_axis(const Tensor& t, int64_t axis, int64_t index);

}  // namespace parity::runtime
