// Helpers the plan-time rewrites share: the planned graph's constant tensors by slot, a new
// constant slot, and dropping the nodes a rewrite replaced.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "runtime/subgraph.h"

namespace parity::runtime {

/// Constant values by slot (initializers that are not graph inputs, and plan-time Constant
/// values). The pointers go into `g`: adding constants may move them (reserve first).
std::map<int, const Tensor*> constant_tensors(const Subgraph& g);

/// Adds an initializer slot named `name` holding `value`; returns the slot.
int add_constant_slot(Subgraph& g, const std::string& name, Tensor value);

/// Removes the planned nodes at the positions in `removed`, keeping the others' order and `uses`
/// (slots each node reads) parallel to `g.nodes_`.
void erase_nodes(Subgraph& g, std::vector<std::vector<int>>& uses, const std::set<int>& removed);

}  // namespace parity::runtime
