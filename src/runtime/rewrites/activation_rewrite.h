// Recognizes activations that exporters decompose into elementwise chains (HardSwish as
// x*clip(x+3,0,6)/6, exact GELU as x*(erf(x/sqrt2)+1)*0.5, SiLU as x*sigmoid(x)) and replaces each chain of planned
// nodes by one node of parity's private domain "ai.parity". Fused plans do this before fusion,
// so an optimized Conv or MatMul applies the activation as one post-op instead of four passes
// over memory; plans that must show every intermediate (hooks, "mark all") keep every node.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "runtime/rewrites/chain_replacement.h"
#include "runtime/subgraph.h"

namespace parity::runtime {

/// Rewrites `g.nodes_` (and `uses`, the slots each node reads, kept parallel to it); returns how
/// many chains it replaced. A chain is replaced only when its intermediate values have no other
/// reader and are not graph outputs, and its constants are exactly the activation's.
/// `make_kernel` builds the replacement node's kernel from its spec.
int rewrite_decomposed_activations(Subgraph& g, std::vector<std::vector<int>>& uses,
                                   const std::function<std::unique_ptr<Kernel>(const NodeSpec&)>& make_kernel);

}  // namespace parity::runtime
