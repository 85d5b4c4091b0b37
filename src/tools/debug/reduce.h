// Delta debugging of a failing model (`parity debug reduce`): shrinks the set of nodes while a
// check keeps failing. Candidates are node subsets of a topologically sorted model (see
// subgraph_cut.h); the reducer only decides which subsets to try.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace parity::tools::debug {

enum class ReduceMode {
  /// Binary search from the outputs (shortest failing prefix), then from the inputs (longest
  /// failing suffix of the last node's ancestors): O(log n) checks; finds one failing node or a
  /// chain ending in it.
  kBisect,
  /// Tries removing each node once, from the outputs back to the inputs, keeping every removal
  /// that still fails: n checks; also shrinks failures that need several nodes on several branches.
  kLinear,
};

/// Parses "bisect" / "linear" (kInvalidArgument otherwise).
ReduceMode parse_reduce_mode(const std::string& text);

struct ReduceOptions {
  ReduceMode mode = ReduceMode::kBisect;
  /// Remove nodes from the output end (Polygraphy's --reduce-outputs, on by default).
  bool reduce_outputs = true;
  /// Remove nodes from the input end (Polygraphy's --reduce-inputs, on by default).
  bool reduce_inputs = true;
};

/// Ascending indices of the nodes a candidate keeps.
using NodeSet = std::vector<size_t>;

/// Whether a candidate still shows the failure. A subset that makes no model (no outputs) is
/// never passed to it.
using FailureCheck = std::function<bool(const NodeSet& nodes)>;

/// The graph facts the reducer needs (GraphCutter provides them).
struct ReduceGraph {
  size_t node_count = 0;
  /// Ancestors of a node plus the node, ascending.
  std::function<NodeSet(size_t)> ancestors;
  /// Whether a subset makes a model (has outputs).
  std::function<bool(const NodeSet&)> is_valid;
};

struct ReduceResult {
  NodeSet failing;                // the smallest failing subset found
  std::optional<NodeSet> passing;  // the passing subset closest in size to `failing` (for --min-good)
  size_t checks = 0;
};

/// Reduces the whole graph, which is assumed to fail and never checked itself (as Polygraphy
/// assumes; when no candidate fails, the result is the whole graph). Every check goes through
/// `fails`; the reducer keeps the passing subset closest in size to the result.
ReduceResult reduce(const ReduceGraph& graph, const FailureCheck& fails, const ReduceOptions& options);

/// "0-12,15,20-30": a node set as ranges (replay keys and messages).
std::string format_node_set(const NodeSet& nodes);
/// Inverse of format_node_set (kInvalidModel on malformed text).
NodeSet parse_node_set(const std::string& text);

}  // namespace parity::tools::debug
