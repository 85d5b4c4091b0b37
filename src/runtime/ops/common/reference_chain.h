// Run-time fallback for an optimized kernel that fused tail nodes: computes the head node and
// each absorbed tail with their reference kernels, exactly as the unfused graph would. The linear
// (oneDNN MatMul/Gemm), elementwise and oneDNN conv/pool kernels use it for the cases their fast
// path does not cover (another dtype, a shape oneDNN rejects, zero-size tensors), so accepting a
// fusion at plan time never loses generality.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/kernel.h"

namespace parity::runtime::ops {

class ReferenceChain {
 public:
  /// `head` is the fused node's own reference kernel; it reads inputs [0, head_inputs) of the
  /// fused node and writes output 0.
  ReferenceChain(std::unique_ptr<Kernel> head, size_t head_inputs);

  /// Records an absorbed tail (call from fuse_tail / fuse_tail_at once the fusion is accepted):
  /// its reference kernel, the input `position` that reads the chain's value (0, or the position
  /// PositionalFusableKernel::fuse_tail_at was given), and where its other inputs start among the
  /// fused node's inputs (in order, skipping `position`).
  void add_tail(const KernelInit& tail, size_t first_extra_input, size_t position = 0);
  size_t num_tails() const { return tails_.size(); }

  /// Computes output 0 of the fused node with reference kernels only. `replaced` substitutes
  /// values for some of the fused node's inputs (by index), e.g. NCHW copies of inputs an
  /// optimized kernel reads channels-last (runtime/channels_last.h).
  void compute(KernelContext& ctx, const std::map<size_t, Value>& replaced = {}) const;

  /// How many times any ReferenceChain ran, process-wide: lets tests check that a case took (or
  /// did not take) an optimized kernel's fast path.
  static uint64_t fallback_count();

 private:
  struct Tail {
    std::unique_ptr<Kernel> kernel;
    size_t first_extra_input = 0;
    size_t position = 0;  // the input that reads the chain's value
    size_t inputs = 1;    // the tail's input count, the chained one included
    size_t outputs = 1;
  };
  std::unique_ptr<Kernel> head_;
  size_t head_inputs_;
  std::vector<Tail> tails_;
};

}  // namespace parity::runtime::ops
