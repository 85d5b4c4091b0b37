// Session-wide switches of the optimized kernels (SessionOptions::kernel_options): which vector
// tier they may dispatch to, and the older kernel paths kept for measuring one against the other.
// Kernels read them at plan time through their KernelInit (kernel_preferences.h); plan files
// record them, so a loaded plan rebuilds the kernels it was built with.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "runtime/cpu_isa.h"

namespace parity::runtime {

/// Where the oneDNN convolution keeps activations while its primitive runs. kAny lets oneDNN pick
/// (blocked or NHWC, with reorders from and to the plain tensors); kPlain forces plain NCHW
/// (oneDNN then runs im2col + GEMM); kPointwisePlain uses plain NCHW for 1x1 stride-1 unpadded
/// convolutions (one GEMM without im2col) and kAny for the others.
enum class ConvActivationLayout { kAny, kPlain, kPointwisePlain };
/** \var ConvActivationLayout::kAny
    oneDNN picks the layout. */
/** \var ConvActivationLayout::kPlain
    Plain NCHW (im2col + GEMM). */
/** \var ConvActivationLayout::kPointwisePlain
    Plain NCHW for 1x1 stride-1 unpadded convolutions, kAny for the others. */

/// How a multi-threaded convolution chooses between row and output-channel slices: by the cost
/// rule per layer (conv_split.cpp), always rows, or channels wherever the kernel can.
enum class ChannelSplitPolicy { kCostRule, kOff, kAlways };
/** \var ChannelSplitPolicy::kCostRule
    Rows or output channels by the per-layer cost rule. */
/** \var ChannelSplitPolicy::kOff
    Always rows. */
/** \var ChannelSplitPolicy::kAlways
    Output channels wherever the kernel can. */

/// Switches of the optimized kernels for one session (SessionOptions::kernel_options).
struct KernelOptions {
  /// The highest vector tier parity's own kernels may use; the CPU's own tier when it is lower
  /// (effective_kernel_isa). The default caps nothing.
  KernelIsa isa_cap = KernelIsa::kAvx512;
  /// x * s with s per channel (squeeze-excitation) as one row-scaling loop, not the broadcast one.
  bool se_scale_direct = true;
  /// Channels-last MaxPool on parity's own loop rather than oneDNN's.
  bool max_pool_direct = true;
  /// GlobalAveragePool's channel sums 16 wide and over two threads on large maps.
  bool global_pool_wide = true;
  ConvActivationLayout conv_layout = ConvActivationLayout::kAny;  ///< Activation layout of the oneDNN convolution.
  /// A convolution's trailing Swish as a separate vector pass over its output rows (false:
  /// oneDNN's post-op).
  bool conv_separate_swish = true;
  /// Stem convolutions (few input channels), narrow 1x1 convolutions, depthwise convolutions and
  /// convolutions on 1x1 maps on parity's direct loops rather than oneDNN's.
  bool conv_stem_direct = true;
  bool conv_pointwise_direct = true;  ///< Narrow 1x1 convolutions on parity's direct loop rather than oneDNN's.
  bool conv_depthwise_direct = true;  ///< Small-kernel 2-D depthwise convolutions on parity's direct loop rather than oneDNN's.
  bool conv_point_product = true;  ///< 1x1 convolutions on 1x1 maps (squeeze-excitation) as parity's small-product loop rather than oneDNN's.
  /// A fused 1x1 + depthwise pair row by row through a ring (false: two passes over the whole
  /// expanded map). Which pairs fuse does not depend on it.
  bool conv_expand_depthwise_ring = true;
  ChannelSplitPolicy conv_channel_split = ChannelSplitPolicy::kCostRule;  ///< How multi-threaded convolutions split their work.
  /// Producers write Concat inputs straight into their slices of its output.
  bool concat_placement = true;
  /// BatchNormalization may change an NCHW input to channels-last for its channels-last consumer.
  bool batch_norm_to_channels_last = true;

  bool operator==(const KernelOptions&) const = default;  ///< Every switch equal.
};

/// The switches of KernelOptions other than the ISA cap, by name ("conv_stem_direct", "dnnl_layout"), with their
/// settings as text ("on", "off"; "any", "plain", "pointwise"; "cost", "always"): what plan files
/// record and what the ref runner's $PARITY_<NAME> switches set.
std::map<std::string, std::string> kernel_switches(const KernelOptions& options);
/// The switch names kernel_switches writes, in a fixed order.
const std::vector<std::string>& kernel_switch_names();
/// Sets switch `name` to `value`; an unknown name or value is kInvalidArgument naming both and
/// the values allowed.
Status set_kernel_switch(KernelOptions& options, const std::string& name, const std::string& value);

/// The tier parity's vector kernels dispatch to under `options`: the CPU's, lowered to the cap.
KernelIsa effective_kernel_isa(const KernelOptions& options);

}  // namespace parity::runtime
