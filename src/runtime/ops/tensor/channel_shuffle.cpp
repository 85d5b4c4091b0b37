// Spec: none (parity's own "ai.parity" domain: the kernel repeats the Reshape -> Transpose -> Reshape it replaces)
// ChannelShuffle, the channel shuffle that ShuffleNet exports as Reshape [N, G, C/G, ...] ->
// Transpose [0, 2, 1, ...] -> Reshape [N, C, ...], recognized by the planner's rewrite
// (runtime/rewrites/channel_shuffle_rewrite.h). Attributes: `groups` G and `shape`, the final
// Reshape's target. Output channel k * G + g is input channel g * (C / G) + k; as in the chain,
// the input only has to hold as many elements as `shape`, whatever its own shape. The kernel is
// in channel_shuffle.h, which the optimized one (channel_shuffle_fast.cpp) extends.
#include "runtime/ops/tensor/channel_shuffle.h"

namespace parity::runtime {

PARITY_REGISTER_KERNEL("ai.parity", "ChannelShuffle", 1, tensor_ops::ChannelShuffle);

}  // namespace parity::runtime
