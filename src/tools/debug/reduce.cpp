#include "tools/debug/reduce.h"

#include <algorithm>
#include <cstdlib>

#include "core/status.h"
#include "core/text.h"

namespace parity::tools::debug {

ReduceMode parse_reduce_mode(const std::string& text) {
  if (text == "bisect") return ReduceMode::kBisect;
  if (text == "linear") return ReduceMode::kLinear;
  throw Error(ErrorCode::kInvalidArgument, "--mode: expected bisect or linear, got '" + text + "'");
}

namespace {

NodeSet range(const NodeSet& nodes, size_t begin, size_t end) { return NodeSet(nodes.begin() + begin, nodes.begin() + end); }

// Runs the checks, remembering the passing subset closest in size to the current failing one.
class Search {
 public:
  Search(const ReduceGraph& graph, const FailureCheck& fails) : graph_(graph), fails_(fails) {}

  bool fails(const NodeSet& nodes) {
    if (nodes.empty() || !graph_.is_valid(nodes)) return false;
    ++checks_;
    const bool failed = fails_(nodes);
    if (!failed) passing_.push_back(nodes);
    return failed;
  }
  size_t checks() const { return checks_; }
  std::optional<NodeSet> closest_passing(size_t size) const {
    std::optional<NodeSet> best;
    auto distance = [&](const NodeSet& s) { return s.size() > size ? s.size() - size : size - s.size(); };
    for (const auto& s : passing_)
      if (!best || distance(s) < distance(*best)) best = s;
    return best;
  }

 private:
  const ReduceGraph& graph_;
  const FailureCheck& fails_;
  size_t checks_ = 0;
  std::vector<NodeSet> passing_;
};

// Shortest failing prefix (in topological order), then the ancestors of its last node when they
// alone still fail (that drops side branches).
NodeSet bisect_outputs(const NodeSet& nodes, Search& search, const ReduceGraph& graph) {
  size_t passing = 0, failing = nodes.size();  // prefix lengths: empty passes, all fails
  while (failing - passing > 1) {
    const size_t mid = passing + (failing - passing) / 2;
    (search.fails(range(nodes, 0, mid)) ? failing : passing) = mid;
  }
  NodeSet prefix = range(nodes, 0, failing);
  NodeSet narrowed;
  const NodeSet ancestors = graph.ancestors(prefix.back());
  std::set_intersection(ancestors.begin(), ancestors.end(), prefix.begin(), prefix.end(), std::back_inserter(narrowed));
  if (narrowed.size() < prefix.size() && search.fails(narrowed)) return narrowed;
  return prefix;
}

// Longest failing suffix: the nodes before it become inputs fed with their recorded values.
NodeSet bisect_inputs(const NodeSet& nodes, Search& search) {
  size_t failing = 0, passing = nodes.size();  // suffix starts: all fails, empty passes
  while (passing - failing > 1) {
    const size_t mid = failing + (passing - failing) / 2;
    (search.fails(range(nodes, mid, nodes.size())) ? failing : passing) = mid;
  }
  return range(nodes, failing, nodes.size());
}

// One removal attempt per node, in the order given.
NodeSet linear(NodeSet nodes, const std::vector<size_t>& order, Search& search) {
  for (size_t node : order) {
    if (nodes.size() <= 1) break;
    NodeSet without;
    std::copy_if(nodes.begin(), nodes.end(), std::back_inserter(without), [&](size_t n) { return n != node; });
    if (without.size() == nodes.size()) continue;
    if (search.fails(without)) nodes = std::move(without);
  }
  return nodes;
}

}  // namespace

ReduceResult reduce(const ReduceGraph& graph, const FailureCheck& fails, const ReduceOptions& options) {
  Search search(graph, fails);
  NodeSet nodes;
  for (size_t i = 0; i < graph.node_count; ++i) nodes.push_back(i);
  if (options.mode == ReduceMode::kBisect) {
    if (options.reduce_outputs && !nodes.empty()) nodes = bisect_outputs(nodes, search, graph);
    if (options.reduce_inputs && !nodes.empty()) nodes = bisect_inputs(nodes, search);
  } else {
    // From the outputs back: nodes after the failure go first, then those before it.
    std::vector<size_t> order;
    if (options.reduce_outputs && options.reduce_inputs) {
      order.assign(nodes.rbegin(), nodes.rend());
    } else if (options.reduce_outputs) {
      // Without input reduction only a node no kept node depends on may go: walk from the end
      // and stop at the first node that must stay.
      while (nodes.size() > 1) {
        NodeSet shorter = range(nodes, 0, nodes.size() - 1);
        if (!search.fails(shorter)) break;
        nodes = std::move(shorter);
      }
    } else if (options.reduce_inputs) {
      while (nodes.size() > 1) {
        NodeSet shorter = range(nodes, 1, nodes.size());
        if (!search.fails(shorter)) break;
        nodes = std::move(shorter);
      }
    }
    if (!order.empty()) nodes = linear(nodes, order, search);
  }
  ReduceResult result;
  result.failing = nodes;
  result.passing = search.closest_passing(nodes.size());
  result.checks = search.checks();
  return result;
}

std::string format_node_set(const NodeSet& nodes) {
  std::string text;
  for (size_t i = 0; i < nodes.size();) {
    size_t j = i;
    while (j + 1 < nodes.size() && nodes[j + 1] == nodes[j] + 1) ++j;
    if (!text.empty()) text += ",";
    text += std::to_string(nodes[i]);
    if (j > i) text += "-" + std::to_string(nodes[j]);
    i = j + 1;
  }
  return text;
}

NodeSet parse_node_set(const std::string& text) {
  NodeSet nodes;
  if (text.empty()) return nodes;
  for (const auto& part : split_list(text, "node set")) {
    const auto dash = part.find('-');
    char* end = nullptr;
    const size_t first = std::strtoull(part.c_str(), &end, 10);
    size_t last = first;
    if (dash != std::string::npos) last = std::strtoull(part.c_str() + dash + 1, &end, 10);
    PARITY_CHECK(end && *end == '\0' && last >= first && !part.empty(), kInvalidModel, "bad node set '", text, "'");
    for (size_t i = first; i <= last; ++i) nodes.push_back(i);
  }
  return nodes;
}

}  // namespace parity::tools::debug
