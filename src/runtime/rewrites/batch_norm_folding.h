// Folds an inference BatchNormalization into the Conv that feeds it: the per-channel scale and
// shift go into the Conv's constant weights and bias at plan time, so the normalization costs
// nothing at run time and an activation after it can fuse into the Conv. Fused plans only (the
// unfused plan keeps the BatchNormalization's input observable).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "runtime/subgraph.h"

namespace parity::runtime {

/// Builds the kernel of a rewritten node from its spec and input slots.
using RewrittenKernelFactory = std::function<std::unique_ptr<Kernel>(const NodeSpec&, const std::vector<int>&)>;

/// Rewrites `g` (nodes, constants, slots) and `uses` (slots each node reads, parallel to
/// g.nodes_); returns how many BatchNormalizations it folded. Only fp32 Conv -> BatchNormalization
/// pairs qualify where the Conv's weights (and bias) and all four statistics are constants, the
/// Conv's output has no other reader and is not a graph output, and the BatchNormalization is in
/// inference mode (opset >= 9, one output).
int fold_batch_norms_into_convs(Subgraph& g, std::vector<std::vector<int>>& uses, const RewrittenKernelFactory& make_kernel);

}  // namespace parity::runtime
