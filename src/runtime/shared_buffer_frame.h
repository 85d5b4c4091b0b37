// The shared buffers of one run of a graph (Subgraph::shared_buffers_, planned by
// runtime/rewrites/concat_placement.h): allocated when a node first writes into one, each placed
// value a view of its bytes. Every step checks what the kernels really did, so a kernel that
// allocates its output some other way, or a run whose shapes differ from the plan's static ones,
// costs a copy (or leaves the Concat copying) but never changes a number.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "runtime/subgraph.h"

namespace parity::runtime {

class SharedBufferFrame {
 public:
  explicit SharedBufferFrame(const Subgraph& graph);

  /// Whether the graph has shared buffers at all (else every other call does nothing).
  bool active() const { return !graph_.shared_buffers_.empty(); }
  /// The view `slot` occupies (its buffer allocated on first need); nullopt when it is not placed.
  std::optional<Tensor> view_of(int slot);
  /// For a placed Concat: when every input is in its slice, sets the output to the view of them
  /// all and returns true; false: the Concat must run.
  bool join_in_place(const PlannedNode& node, std::vector<Value>& frame);
  /// After a producer ran: an output of the planned dtype and shape that its kernel wrote
  /// elsewhere is copied into its slice, so the Concats reading it stay views.
  void settle_outputs(const PlannedNode& node, std::vector<Value>& frame);
  /// Drops this frame's hold on the buffers no node after `node_index` writes or joins (the views
  /// keep them alive as long as they are read).
  void release_after(int node_index);

 private:
  /// Whether `value` is the planned view of `slot`.
  bool in_place(const Value& value, int slot) const;

  const Subgraph& graph_;
  std::vector<std::shared_ptr<Storage>> buffers_;  // per Subgraph::shared_buffers_ entry; null until first need
};

}  // namespace parity::runtime
