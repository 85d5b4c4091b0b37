// Fusion through an input other than 0: a FusableKernel that also absorbs a tail reading its
// output as the x of Mul(w, x) or Div(1, x). Kept out of kernel.h so that kernels fusing only
// through input 0 (the usual case: Conv -> Add -> Relu) need not know about it.
#pragma once

#include "runtime/kernel.h"

namespace parity::runtime {

class PositionalFusableKernel : public FusableKernel {
 public:
  /// As fuse_tail, for a tail that reads this kernel's output at input `position` > 0. On
  /// acceptance the tail's other inputs are appended to this node's inputs in order, skipping
  /// `position`, starting at `first_extra_input`.
  virtual bool fuse_tail_at(const KernelInit& tail, size_t position, size_t first_extra_input) = 0;
};

}  // namespace parity::runtime
