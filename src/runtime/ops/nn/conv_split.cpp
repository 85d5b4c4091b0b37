// Spec: https://onnx.ai/onnx/operators/onnx__Conv.html
#include "runtime/ops/nn/conv_split.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>

namespace parity::runtime::nn {
namespace {

std::atomic<uint64_t> channel_slice_runs{0};

/// Evenly spaced bounds over `units`, rounded to multiples of `align` units; empty when the
/// rounding leaves a slice with nothing.
std::vector<int64_t> aligned_bounds(int64_t units, int64_t slices, int64_t align) {
  std::vector<int64_t> bounds{0};
  for (int64_t s = 1; s < slices; ++s) {
    const int64_t even = units * s / slices;
    bounds.push_back(std::min(units, (even + align / 2) / align * align));
  }
  bounds.push_back(units);
  for (size_t s = 1; s < bounds.size(); ++s)
    if (bounds[s] <= bounds[s - 1]) return {};
  return bounds;
}

}  // namespace

uint64_t conv_channel_slice_runs() { return channel_slice_runs.load(std::memory_order_relaxed); }
void count_conv_channel_slice_run() { channel_slice_runs.fetch_add(1, std::memory_order_relaxed); }

std::vector<int64_t> channel_slice_bounds(const ConvProblem& p, int64_t slices) {
  if (slices < 2 || p.group <= 0 || p.out_channels % p.group != 0) return {};
  const int64_t per_group = p.out_channels / p.group;
  // Group-1 convolutions cut between any channels; grouped ones between groups.
  const int64_t units = p.group == 1 ? p.out_channels : p.group;
  const int64_t unit_channels = p.group == 1 ? 1 : per_group;
  constexpr int64_t kVectorChannels = 16;
  std::vector<int64_t> bounds;
  if (kVectorChannels % unit_channels == 0) bounds = aligned_bounds(units, slices, kVectorChannels / unit_channels);
  if (bounds.empty()) bounds = aligned_bounds(units, slices, 1);
  for (int64_t& b : bounds) b *= unit_channels;
  return bounds;
}

// The rule estimates what the busiest thread does, in multiply-add equivalents: its share of the
// multiply-adds plus kFloatCost for every float it moves (weights, input, output, and the copies a
// channel slice adds). A row slice reads every weight and its own rows of input (with the window's
// overlap) and output; the rows rarely divide evenly (7 rows: 4 + 3). A channel slice reads its
// own weights, the whole input (grouped: its own channels of it) and writes its channels; in
// channels-last order those channels are strided, which oneDNN's jit kernels do not write (they
// fall back to ref:any), so the slice computes into a dense buffer and copies it out (and a grouped
// slice copies its input channels in).
//
// Measured at 2 threads as the critical path (the slowest slice's thread CPU time, summed over a
// model's convolutions; the shared 2-core machine gave wall times too noisy to compare), rows only
// -> this rule: MobileNetV3-Large 4.00 -> 3.86 ms, EfficientNet-B0 7.03 -> 6.71, LR-ASPP 6.64 ->
// 6.10, ResNet-18 16.9 -> 14.8, ResNet-50 34.6 -> 32.8; MobileNetV2, SqueezeNet, ShuffleNetV2 and
// DenseNet-121 within noise. Channel slices everywhere were worse on every model but ResNet-18
// (MobileNetV3 5.78 ms, MobileNetV2 7.19 against 4.24: early layers read large inputs whole, and
// depthwise slices copy their channels in and out).
ConvSplitAxis choose_conv_split_axis(const ConvProblem& p, int64_t slices, const ConvSplitLayout& layout) {
  const ChannelSplitPolicy policy = layout.policy;
  if (policy == ChannelSplitPolicy::kOff || slices < 2 || channel_slice_bounds(p, slices).empty())
    return ConvSplitAxis::kRows;
  if (policy == ChannelSplitPolicy::kAlways) return ConvSplitAxis::kChannels;
  // Row slices never run Winograd, channel slices may (conv_dnnl.cpp: from 64 channels per slice),
  // which about halves their multiply-adds: ResNet-18's convolutions at 2 threads, critical path
  // (thread CPU time of the slowest slice), 14.9 ms on row slices, 13.3 ms by the rule below
  // without Winograd, 12.9 ms with these layers on Winograd channel slices.
  if (layout.winograd_slices) return ConvSplitAxis::kChannels;
  // About 16 multiply-adds per float moved: a core's AVX-512 FMAs against what it streams from L2
  // and beyond. 8 and 32 picked the same layers on the models measured (MobileNetV2/V3,
  // EfficientNet-B0, ResNet-18: critical paths within the noise of each other).
  constexpr double kFloatCost = 16.0;
  const WindowGeometry& g = p.geom;
  const double weights = static_cast<double>(p.out_channels) * (p.in_channels / p.group) * g.kernel_numel();
  const double input = static_cast<double>(p.batch) * p.in_channels * g.in_numel();
  const double output = static_cast<double>(p.batch) * p.out_channels * g.out_numel();
  const double macs = output * (p.in_channels / p.group) * g.kernel_numel();

  const int64_t rows = (g.out[0] + slices - 1) / slices;
  const double row_share = static_cast<double>(rows) / g.out[0];
  const int64_t extent = (g.kernel[0] - 1) * g.dilations[0] + 1;
  const double input_row_share =
      std::min<double>(1.0, static_cast<double>((rows - 1) * g.strides[0] + extent) / g.in[0]);
  const double row_cost = macs * row_share + kFloatCost * (weights + input * input_row_share + output * row_share);

  const std::vector<int64_t> bounds = channel_slice_bounds(p, slices);
  int64_t widest = 0;
  for (size_t s = 1; s < bounds.size(); ++s) widest = std::max(widest, bounds[s] - bounds[s - 1]);
  const double channel_share = static_cast<double>(widest) / p.out_channels;
  const bool grouped = p.group > 1;
  double channel_floats = weights * channel_share + output * channel_share + (grouped ? input * channel_share : input);
  if (layout.output_channels_last || p.batch > 1) channel_floats += output * channel_share;
  if (grouped && layout.input_channels_last) channel_floats += input * channel_share;
  const double channel_cost = macs * channel_share + kFloatCost * channel_floats;
  return channel_cost < row_cost ? ConvSplitAxis::kChannels : ConvSplitAxis::kRows;
}

}  // namespace parity::runtime::nn
