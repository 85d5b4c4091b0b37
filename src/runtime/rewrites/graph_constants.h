// Helpers the plan-time rewrites share: the planned graph's constant tensors by slot, and a new
// constant slot.
#pragma once

#include <map>
#include <string>

#include "runtime/subgraph.h"

namespace parity::runtime {

/// Constant values by slot (initializers that are not graph inputs, and plan-time Constant
/// values). The pointers go into `g`: adding constants may move them (reserve first).
std::map<int, const Tensor*> constant_tensors(const Subgraph& g);

/// Adds an initializer slot named `name` holding `value`; returns the slot.
int add_constant_slot(Subgraph& g, const std::string& name, Tensor value);

}  // namespace parity::runtime
