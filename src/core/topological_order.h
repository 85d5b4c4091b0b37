// Kahn's algorithm, shared by the planner (runtime) and the graph IR (model).
#pragma once

#include <cstddef>
#include <vector>

namespace parity {

/// A stable topological order of nodes 0..n-1, where deps[i] lists the nodes node i waits for
/// (repeats allowed): each node comes after all of them, and wherever the dependencies leave a
/// choice the smallest index goes first, so an already sorted graph keeps its order. Nodes on a
/// cycle, or waiting for one, are left out.
std::vector<size_t> stable_topological_order(const std::vector<std::vector<size_t>>& deps);

}  // namespace parity
