// How the oneDNN convolution kernel (conv_dnnl.cpp) divides one convolution over a session's
// threads: each thread runs a single-threaded primitive on one slice of the work, either a range
// of output rows (first spatial dim) or a range of output channels (whole groups for grouped and
// depthwise convolutions). Pure arithmetic on the problem, so tests can check the rule directly.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/kernel_options.h"
#include "runtime/ops/nn/conv_core.h"

namespace parity::runtime::nn {

enum class ConvSplitAxis { kRows, kChannels };

/// How many convolution runs took channel slices, process-wide; lets tests check that a case
/// really ran them.
uint64_t conv_channel_slice_runs();
void count_conv_channel_slice_run();

/// Where the kernel's tensors live, as far as the cost of a channel slice is concerned.
struct ConvSplitLayout {
  bool input_channels_last = false, output_channels_last = false;
  /// Channel slices would run Winograd's algorithm (row slices never do: conv_dnnl.cpp).
  bool winograd_slices = false;
  /// KernelOptions::conv_channel_split: kOff keeps every convolution on row slices, kAlways takes
  /// channel slices wherever the kernel can, kCostRule decides per layer.
  ChannelSplitPolicy policy = ChannelSplitPolicy::kCostRule;
};

/// Output-channel bounds of `slices` channel slices of `p`: slice s covers output channels
/// [bounds[s], bounds[s + 1]). Bounds fall on whole groups, and on multiples of 16 channels (one
/// AVX-512 register of fp32) where that still leaves every slice some channels. Empty when the
/// problem cannot be cut into `slices` non-empty slices of whole groups.
std::vector<int64_t> channel_slice_bounds(const ConvProblem& p, int64_t slices);

/// The slice axis with the smaller estimated cost for the busiest of `slices` threads (see the
/// rule's figures in conv_split.cpp); kRows when channel slices are not possible.
ConvSplitAxis choose_conv_split_axis(const ConvProblem& p, int64_t slices, const ConvSplitLayout& layout);

}  // namespace parity::runtime::nn
