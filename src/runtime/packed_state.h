// Kernels whose plan-time work (weights reordered into the layout their library chose for this
// machine) is saved in a plan file and restored on load instead of being redone
// (runtime/plan/plan_file.h). Optional: a kernel without it is simply packed again on load.
#pragma once

#include <optional>
#include <string>

#include "core/tensor.h"

namespace parity::runtime {

/// One kernel's packed weights: a kernel-specific description of the layout and the bytes.
struct PackedState {
  std::string layout;  // e.g. a oneDNN memory descriptor; opaque to the plan file
  Tensor data;         // uint8 bytes; a restored kernel may keep pointing into them (a mapped plan)
};

/// Implemented by kernels that can hand out their packed state.
class PackedStateKernel {
 public:
  virtual ~PackedStateKernel() = default;
  /// The state to save; nullopt when nothing was packed at plan time (a dynamic input shape).
  virtual std::optional<PackedState> packed_state() const = 0;
};

/// Implemented by the plan loader's KernelInit: the state saved for the node being rebuilt. A
/// kernel factory that finds one (through dynamic_cast) restores it instead of packing; one it
/// cannot use makes the factory throw kInvalidModel, and the plan is refused.
class PackedStateSource {
 public:
  virtual ~PackedStateSource() = default;
  virtual const PackedState* saved_packed_state() const = 0;
};

}  // namespace parity::runtime
