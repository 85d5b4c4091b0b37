// Recognizes the channel shuffle that ShuffleNet exports as Reshape [N, G, C/G, H, W] ->
// Transpose [0, 2, 1, 3, 4] -> Reshape [N, C, H, W] (any number of trailing dims) and replaces
// the three planned nodes by one "ai.parity" ChannelShuffle node (ops/tensor/channel_shuffle.cpp).
// The Transpose of a 5-D value cannot take a channels-last value; the ChannelShuffle can (a
// gather of each pixel's channels), so the convolutions and Concat around it keep channels-last.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "runtime/subgraph.h"

namespace parity::runtime {

/// Rewrites `g.nodes_` (and `uses`, kept parallel to it); returns how many shuffles it replaced.
/// A chain is replaced only when both shapes are plan-time constants with every dimension given
/// (a -1 in the final one allowed), the intermediate values have no other reader and are not graph
/// outputs, and the final shape is [N, G * C/G, trailing dims...] of the first one.
int rewrite_channel_shuffles(Subgraph& g, std::vector<std::vector<int>>& uses,
                             const std::function<std::unique_ptr<Kernel>(const NodeSpec&)>& make_kernel);

}  // namespace parity::runtime
