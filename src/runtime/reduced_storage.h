// bf16 storage between native bf16 layers of a reduced-precision plan (runtime/reduced_precision.h).
//
// A bf16 layer normally hands out an fp32 buffer holding bf16-rounded values, so a native bf16
// reader (oneDNN's convolution on AVX512-BF16) converts it back to bf16 before computing, and the
// writer pays a rounding pass: two passes over every activation between two bf16 convolutions.
// When every reader of a value reads it natively in bf16, the writer stores it as a bf16 tensor
// instead (the same numbers: the writer rounds to nearest even once) and the readers take it as
// is. Values that a graph output, a non-native layer or an observer (hooks, intermediate
// outputs: they run the unfused plan) sees stay fp32.
#pragma once

#include <cstddef>

namespace parity::runtime {

class Subgraph;

/// Implemented by kernels with a native reduced-precision path (and forwarded by the
/// reduced-precision wrapper).
class ReducedStorageKernel {
 public:
  virtual ~ReducedStorageKernel() = default;
  /// Whether input `input` may arrive as a bf16 tensor (the kernel computes on it directly).
  virtual bool reads_reduced_input(size_t input) const = 0;
  /// Whether output 0 can be written as a bf16 tensor.
  virtual bool can_write_reduced() const = 0;
  /// From now on, output 0 is written as a bf16 tensor.
  virtual void write_reduced() = 0;
};

/// Lets every bf16 layer whose output only native bf16 readers see store it in bf16 (main graph of a
/// fused plan, after finalize_reduced_precision). Returns how many values are stored so.
int store_reduced_between_native_layers(Subgraph& g);

}  // namespace parity::runtime
