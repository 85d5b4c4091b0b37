#include "runtime/rewrites/chain_replacement.h"
#include "runtime/rewrites/graph_constants.h"

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
  // The replacement takes the place of the chain's last node: what it reads is produced before
  // the chain's first node, so the order stays valid.
  std::set<int> removed;
  for (const ChainReplacement& chain : chains) {
    const int last = chain.nodes.back();
    PlannedNode node = replacement_node(g, chain, g.nodes_[last]);
    node.kernel = make_kernel(node.spec);
    g.nodes_[last] = std::move(node);
    uses[last] = {chain.input};
    removed.insert(chain.nodes.begin(), chain.nodes.end() - 1);
  }
  erase_nodes(g, uses, removed);
  return static_cast<int>(chains.size());
}

}  // namespace parity::runtime
