#include "runtime/rewrites/chain_replacement.h"

#include <map>
#include <set>

namespace parity::runtime {

SlotReaders::SlotReaders(const Subgraph& g, const std::vector<std::vector<int>>& uses)
    : readers_(g.slot_names_.size()), is_output_(g.slot_names_.size(), false) {
  for (size_t n = 0; n < uses.size(); ++n)
    for (int s : uses[n]) readers_[s].push_back(static_cast<int>(n));
  for (int s : g.output_slots_) is_output_[s] = true;
}

int SlotReaders::sole_reader(int slot) const {
  if (slot < 0 || is_output_[slot] || readers_[slot].size() != 1) return -1;
  return readers_[slot][0];
}

namespace {

PlannedNode replacement_node(const Subgraph& g, const ChainReplacement& chain, const PlannedNode& last) {
  PlannedNode node;
  node.spec.name = last.spec.name;
  node.spec.op_type = chain.op_type;
  node.spec.domain = kParityDomain;
  node.spec.opset = 1;
  node.spec.since_version = 1;
  node.spec.inputs = {g.slot_names_[chain.input]};
  node.spec.outputs = {last.spec.outputs[0]};
  node.spec.attributes = chain.attributes;
  node.inputs = {chain.input};
  node.outputs = {last.outputs[0]};
  node.label = std::string(kParityDomain) + "::" + chain.op_type + " node '" + last.spec.name +
               "' (recognized from " + chain.recognized_from + ")";
  return node;
}

}  // namespace

int replace_chains(Subgraph& g, std::vector<std::vector<int>>& uses, const std::vector<ChainReplacement>& chains,
                   const std::function<std::unique_ptr<Kernel>(const NodeSpec&)>& make_kernel) {
  if (chains.empty()) return 0;
  std::map<int, const ChainReplacement*> replace_at;
  std::set<int> removed;
  for (const ChainReplacement& chain : chains) {
    replace_at[chain.nodes.back()] = &chain;
    removed.insert(chain.nodes.begin(), chain.nodes.end());
  }
  // The replacement takes the place of the chain's last node: what it reads is produced before
  // the chain's first node, so the order stays valid.
  std::vector<PlannedNode> nodes;
  std::vector<std::vector<int>> node_uses;
  for (int n = 0; n < static_cast<int>(g.nodes_.size()); ++n) {
    if (auto it = replace_at.find(n); it != replace_at.end()) {
      PlannedNode node = replacement_node(g, *it->second, g.nodes_[n]);
      node.kernel = make_kernel(node.spec);
      nodes.push_back(std::move(node));
      node_uses.push_back({it->second->input});
      continue;
    }
    if (removed.count(n)) continue;
    nodes.push_back(std::move(g.nodes_[n]));
    node_uses.push_back(std::move(uses[n]));
  }
  g.nodes_ = std::move(nodes);
  uses = std::move(node_uses);
  return static_cast<int>(chains.size());
}

}  // namespace parity::runtime
