// Preprocessing of the navigator: the model's inputs and outputs from the model file, the batch
// axis and the other dynamic axes, and the samples it keeps (model_input/{conversion,correctness,
// profiling}/N.npz). Samples are single items: the batch axis is squeezed out when they are taken
// from the data loader and put back (repeated to the batch size) when they are fed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/metadata.h"
#include "core/tensor_map.h"
#include "tools/navigator/status.h"

namespace parity::tools::navigator {

/// Sample sets by kind, in the order of sample_kinds().
inline const std::vector<std::string>& sample_kinds() {
  static const std::vector<std::string> kinds{"conversion", "correctness", "profiling"};
  return kinds;
}

/// Inputs and outputs as an ONNX model file declares them (no runtime involved, so models a
/// runtime cannot run still get through).
struct ModelIo {
  TensorMetadata inputs;
  TensorMetadata outputs;
};
ModelIo read_onnx_io(const std::filesystem::path& model_path);

TensorSpec spec_of(const TensorMeta& meta);

/// Item `index` of `tensor` along `axis`, with that axis removed.
Tensor take_item(const Tensor& tensor, int64_t axis, int64_t index);
/// `item` with `axis` inserted and the item repeated `count` times along it.
Tensor repeat_item(const Tensor& item, int64_t axis, int64_t count);

/// A feed from the data loader -> one sample (the first item of the batch when there is a batch axis).
TensorMap sample_from_feed(const TensorMap& feed, std::optional<int64_t> batch_dim);
/// A sample -> a feed of `batch_size` (the sample repeated along the batch axis; as is without one).
TensorMap feed_from_sample(const TensorMap& sample, std::optional<int64_t> batch_dim, int64_t batch_size);

/// The samples of each kind (squeezed).
struct SampleSets {
  std::map<std::string, std::vector<TensorMap>> by_kind;
  const std::vector<TensorMap>& of(const std::string& kind) const;
};

/// Dynamic axes per input in sample coordinates (the batch axis excluded): the model's dynamic
/// dims, the --dynamic-axes ones, and axes whose size varies across samples.
std::map<std::string, std::vector<int64_t>> sample_dynamic_axes(const std::vector<TensorMap>& samples,
                                                                 const TensorMetadata& inputs,
                                                                 const std::map<std::string, std::vector<int64_t>>& user_axes,
                                                                 std::optional<int64_t> batch_dim);

/// Picks the sets: conversion = the samples with the smallest and the largest size of every
/// dynamic axis (the first sample when nothing is dynamic), correctness = up to `count` samples
/// drawn with `seed`, profiling = one sample drawn with `seed`.
SampleSets select_samples(const std::vector<TensorMap>& samples,
                          const std::map<std::string, std::vector<int64_t>>& dynamic_axes, int64_t count, int64_t seed);

/// min/opt/max of every dynamic axis over the samples (opt = the profiling sample), in model
/// coordinates; the batch axis spans 1..max_batch_size.
std::vector<AxisProfile> axis_profiles(const SampleSets& sets, const std::map<std::string, std::vector<int64_t>>& dynamic_axes,
                                       std::optional<int64_t> batch_dim, int64_t max_batch_size);

/// Writes DIR/<kind>/N.npz for every set.
void save_sample_sets(const std::filesystem::path& dir, const SampleSets& sets);
/// Reads DIR/<kind>/N.npz (N = 0, 1, ... in order); a missing folder gives an empty set.
SampleSets load_sample_sets(const std::filesystem::path& dir);

/// Number of NaN and infinite values in a floating-point tensor (0 for other dtypes).
int64_t count_non_finite(const Tensor& tensor);

}  // namespace parity::tools::navigator
