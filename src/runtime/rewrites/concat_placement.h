// Concat without copies (#20). DenseNet's dense blocks Concat a growing list of feature maps:
// layer k's output is part of every later Concat of its block, so each Concat copied all the
// block's earlier maps again. Where a Concat's output is its inputs' bytes back to back (every
// dimension before the axis is 1: NCHW with batch 1 along the channels), the producers of its
// inputs can write straight into their slices and the Concat's output is a view of them. The
// Concats of a dense block read prefixes of one list of values, so they share one buffer of the
// block's final size: each producer writes its slice once, each Concat's output is a prefix.
//
// This pass plans it (Subgraph::shared_buffers_, placed_values_, PlannedNode::placed_concat); the
// executor allocates the buffers and hands producers their slices (runtime/concat_in_place.h).
// The planner runs it in fused plans only, so hooks and "mark all" see every value in memory of
// its own; placed values keep the ONNX layout (no channels-last hand-off), and nothing changes
// any number: the kernels compute what they did, only where their outputs live differs.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/subgraph.h"

namespace parity::runtime {

/// A value's type when every dimension is known at plan time.
struct StaticType {
  DType dtype = DType::kUndefined;
  Shape shape;
};
using StaticTypeOf = std::function<std::optional<StaticType>(int slot)>;

/// Places the inputs of Concats in `g` into shared buffers; returns how many Concats it placed.
/// A Concat is placed when its output's slices are contiguous, every type involved is static, and each input
/// is a distinct value a node of this graph produces (not a Concat's output, not a graph output).
/// A value sits in one buffer only: a Concat whose inputs are not a prefix of the list its first
/// input was placed with (a value read by two unrelated Concats) copies as before. A buffer needs
/// two Concats or more (a dense block's): a lone Concat keeps its copy, which the channels-last
/// hand-off makes cheaper than NCHW slices between convolutions.
int place_concat_inputs(Subgraph& g, const StaticTypeOf& type_of);

/// Why a plan's placement (loaded from a file) could let a view reach outside its buffer or a
/// Concat's output differ from its inputs' bytes; empty when consistent.
std::string placement_inconsistency(const Subgraph& g);

}  // namespace parity::runtime
