// What the chain rewrites share: each recognizes a run of planned nodes that computes one
// operation (an activation exporters decompose, a channel shuffle) and puts a single node of
// parity's private domain in its place. Finding the chains differs per rewrite; the bookkeeping
// of who reads a value and of splicing the replacement into the plan does not.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/subgraph.h"

namespace parity::runtime {

/// The domain of the nodes the rewrites put in place of recognized chains.
inline constexpr const char* kParityDomain = "ai.parity";

/// Which planned nodes read each slot, so a rewrite can tell that an intermediate value has no
/// reader outside its chain.
class SlotReaders {
 public:
  SlotReaders(const Subgraph& g, const std::vector<std::vector<int>>& uses);

  /// The one node reading `slot` (inside nested graphs included), if exactly one does and the
  /// value is not a graph output; -1 otherwise.
  int sole_reader(int slot) const;

 private:
  std::vector<std::vector<int>> readers_;
  std::vector<bool> is_output_;
};

/// One recognized chain and the node that replaces it.
struct ChainReplacement {
  std::vector<int> nodes;  // positions of the chain's nodes, the last one producing the result
  int input = -1;          // the slot the replacement reads, produced before the chain's first node
  std::string op_type;     // in kParityDomain
  model::AttributeMap attributes;
  std::string recognized_from;  // for the node's label, e.g. "4 nodes"
};

/// Replaces each chain of `chains` (which must not overlap) by one node at the place of the
/// chain's last node, keeping `uses` parallel to `g.nodes_`; returns how many it replaced.
/// `make_kernel` builds each replacement's kernel from its spec.
int replace_chains(Subgraph& g, std::vector<std::vector<int>>& uses, const std::vector<ChainReplacement>& chains,
                   const std::function<std::unique_ptr<Kernel>(const NodeSpec&)>& make_kernel);

}  // namespace parity::runtime
