#include "runtime/rewrites/graph_constants.h"

#include <set>

namespace parity::runtime {

std::map<int, const Tensor*> constant_tensors(const Subgraph& g) {
  std::set<int> graph_inputs(g.input_slots_.begin(), g.input_slots_.end());
  std::map<int, const Tensor*> constants;
  for (const auto& [slot, value] : g.constants_)
    if (value.is_tensor() && !graph_inputs.count(slot)) constants[slot] = &value.tensor();
  for (const auto& [slot, value] : g.plan_time_values_)
    if (value.is_tensor()) constants[slot] = &value.tensor();
  return constants;
}

int add_constant_slot(Subgraph& g, const std::string& name, Tensor value) {
  const int slot = static_cast<int>(g.slot_names_.size());
  g.slot_names_.push_back(name);
  g.slot_of_[name] = slot;
  g.is_initializer_.push_back(true);
  g.constants_.emplace_back(slot, Value(std::move(value)));
  return slot;
}

void erase_nodes(Subgraph& g, std::vector<std::vector<int>>& uses, const std::set<int>& removed) {
  if (removed.empty()) return;
  std::vector<PlannedNode> nodes;
  std::vector<std::vector<int>> node_uses;
  nodes.reserve(g.nodes_.size() - removed.size());
  node_uses.reserve(g.nodes_.size() - removed.size());
  for (int n = 0; n < static_cast<int>(g.nodes_.size()); ++n) {
    if (removed.count(n)) continue;
    nodes.push_back(std::move(g.nodes_[n]));
    node_uses.push_back(std::move(uses[n]));
  }
  g.nodes_ = std::move(nodes);
  uses = std::move(node_uses);
}

}  // namespace parity::runtime
