#include "tools/debug/capability.h"

#include <deque>

namespace parity::tools::debug {

size_t Capability::supported_count() const {
  size_t n = 0;
  for (const auto& node : nodes) n += node.supported;
  return n;
}

namespace {

Status check_cut(const GraphCutter& cutter, const NodeSet& nodes, const std::vector<TensorMap>& values,
                 const SupportCheck& runs) {
  const auto cut = cutter.cut(nodes);
  if (!cut) return Error(ErrorCode::kInvalidArgument, "the nodes make no model (no outputs)");
  return runs(*cut, feeds_for(*cut, values));
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

Capability find_capability(const GraphCutter& cutter, const std::vector<TensorMap>& values, const SupportCheck& runs) {
  Capability capability;
  for (size_t i = 0; i < cutter.node_count(); ++i) {
    const Status st = check_cut(cutter, {i}, values, runs);
    capability.nodes.push_back({st.is_ok(), st.is_ok() ? std::string() : first_line(st.message())});
  }
  std::vector<Partition> groups;
  for (size_t i = 0; i < cutter.node_count(); ++i) {
    if (groups.empty() || groups.back().supported != capability.nodes[i].supported)
      groups.push_back({capability.nodes[i].supported, {}});
    groups.back().nodes.push_back(i);
  }
  for (const auto& group : groups) {
    if (!group.supported) {
      capability.partitions.push_back(group);
      continue;
    }
    // Subgraph by subgraph: a group whose nodes each run may still fail together.
    std::deque<NodeSet> pending{group.nodes};
    while (!pending.empty()) {
      NodeSet piece = std::move(pending.front());
      pending.pop_front();
      if (piece.size() == 1 || check_cut(cutter, piece, values, runs).is_ok()) {
        capability.partitions.push_back({true, std::move(piece)});
        continue;
      }
      const auto middle = piece.begin() + static_cast<std::ptrdiff_t>(piece.size() / 2);
      pending.push_front(NodeSet(middle, piece.end()));
      pending.push_front(NodeSet(piece.begin(), middle));
    }
  }
  return capability;
}

}  // namespace parity::tools::debug
