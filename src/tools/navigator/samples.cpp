#include "tools/navigator/samples.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <set>

#include "core/formats/npz.h"
#include "core/status.h"
#include "model/graph.h"
#include "model/model.h"

namespace parity::tools::navigator {

namespace fs = std::filesystem;

namespace {

// Bytes before, the size of, and the bytes after `axis` of a contiguous tensor.
struct AxisSplit {
  int64_t outer = 1;
  int64_t size = 1;
  size_t inner_bytes = 0;
};

AxisSplit split_at(const Shape& shape, int64_t axis, size_t element_size) {
  AxisSplit split;
  for (int64_t i = 0; i < axis; ++i) split.outer *= shape[i];
  split.size = shape[axis];
  int64_t inner = 1;
  for (size_t i = axis + 1; i < shape.size(); ++i) inner *= shape[i];
  split.inner_bytes = static_cast<size_t>(inner) * element_size;
  return split;
}

// Sample coordinates of a model axis: the batch axis is gone, later axes move down by one.
std::optional<int64_t> sample_axis(int64_t model_axis, std::optional<int64_t> batch_dim) {
  if (!batch_dim) return model_axis;
  if (model_axis == *batch_dim) return std::nullopt;
  return model_axis > *batch_dim ? model_axis - 1 : model_axis;
}

int64_t model_axis(int64_t sample_axis, std::optional<int64_t> batch_dim) {
  return batch_dim && sample_axis >= *batch_dim ? sample_axis + 1 : sample_axis;
}

}  // namespace

ModelIo read_onnx_io(const fs::path& model_path) {
  model::Model model = model::load_model(model_path).value();
  auto graph = model::Graph::from_model(model);
  ModelIo io;
  for (const auto& value : graph->inputs)
    if (value->is_variable()) io.inputs.add(value->name, value->dtype, value->shape);
  for (const auto& value : graph->outputs) io.outputs.add(value->name, value->dtype, value->shape);
  return io;
}

TensorSpec spec_of(const TensorMeta& meta) {
  TensorSpec spec;
  spec.name = meta.name;
  spec.dtype = std::string(dtype_name(meta.dtype));
  spec.unknown_rank = meta.shape.unknown_rank;
  for (const auto& dim : meta.shape.dims) spec.shape.push_back(dim.is_static() ? dim.value : -1);
  return spec;
}

Tensor take_item(const Tensor& tensor, int64_t axis, int64_t index) {
  PARITY_CHECK(axis >= 0 && axis < tensor.rank(), kInvalidArgument, "batch axis ", axis, " does not exist in a tensor of shape ",
               shape_to_string(tensor.shape()));
  PARITY_CHECK(index >= 0 && index < tensor.dim(axis), kInvalidArgument, "item ", index, " is outside the batch of ",
               tensor.dim(axis));
  const AxisSplit split = split_at(tensor.shape(), axis, dtype_size(tensor.dtype()));
  Shape shape = tensor.shape();
  shape.erase(shape.begin() + axis);
  Tensor item(tensor.dtype(), shape);
  const auto* src = static_cast<const std::byte*>(tensor.raw_data());
  auto* dst = static_cast<std::byte*>(item.raw_data());
  for (int64_t o = 0; o < split.outer; ++o)
    std::memcpy(dst + o * split.inner_bytes, src + (o * split.size + index) * split.inner_bytes, split.inner_bytes);
  return item;
}

Tensor repeat_item(const Tensor& item, int64_t axis, int64_t count) {
  PARITY_CHECK(axis >= 0 && axis <= item.rank(), kInvalidArgument, "batch axis ", axis, " cannot be inserted into shape ",
               shape_to_string(item.shape()));
  Shape shape = item.shape();
  shape.insert(shape.begin() + axis, count);
  Tensor batch(item.dtype(), shape);
  const AxisSplit split = split_at(shape, axis, dtype_size(item.dtype()));
  const auto* src = static_cast<const std::byte*>(item.raw_data());
  auto* dst = static_cast<std::byte*>(batch.raw_data());
  for (int64_t o = 0; o < split.outer; ++o)
    for (int64_t c = 0; c < count; ++c)
      std::memcpy(dst + (o * count + c) * split.inner_bytes, src + o * split.inner_bytes, split.inner_bytes);
  return batch;
}

TensorMap sample_from_feed(const TensorMap& feed, std::optional<int64_t> batch_dim) {
  if (!batch_dim) return feed.clone();
  TensorMap sample;
  for (const auto& [name, tensor] : feed) sample.set(name, take_item(tensor, *batch_dim, 0));
  return sample;
}

TensorMap feed_from_sample(const TensorMap& sample, std::optional<int64_t> batch_dim, int64_t batch_size) {
  if (!batch_dim) return sample;
  TensorMap feed;
  for (const auto& [name, tensor] : sample) feed.set(name, repeat_item(tensor, *batch_dim, batch_size));
  return feed;
}

const std::vector<TensorMap>& SampleSets::of(const std::string& kind) const {
  static const std::vector<TensorMap> kEmpty;
  auto it = by_kind.find(kind);
  return it == by_kind.end() ? kEmpty : it->second;
}

std::map<std::string, std::vector<int64_t>> sample_dynamic_axes(const std::vector<TensorMap>& samples,
                                                                 const TensorMetadata& inputs,
                                                                 const std::map<std::string, std::vector<int64_t>>& user_axes,
                                                                 std::optional<int64_t> batch_dim) {
  std::map<std::string, std::set<int64_t>> axes;
  for (const auto& meta : inputs)
    for (size_t i = 0; i < meta.shape.dims.size(); ++i)
      if (!meta.shape.dims[i].is_static())
        if (auto axis = sample_axis(static_cast<int64_t>(i), batch_dim)) axes[meta.name].insert(*axis);
  for (const auto& [name, list] : user_axes)
    for (int64_t axis : list)
      if (auto s = sample_axis(axis, batch_dim)) axes[name].insert(*s);
  if (!samples.empty()) {
    for (const auto& [name, first] : samples.front()) {
      for (const auto& sample : samples) {
        const Tensor* t = sample.find(name);
        if (!t || t->rank() != first.rank()) continue;
        for (int64_t a = 0; a < first.rank(); ++a)
          if (t->dim(a) != first.dim(a)) axes[name].insert(a);
      }
    }
  }
  std::map<std::string, std::vector<int64_t>> result;
  for (const auto& [name, set] : axes)
    if (!set.empty()) result[name] = std::vector<int64_t>(set.begin(), set.end());
  return result;
}

SampleSets select_samples(const std::vector<TensorMap>& samples,
                          const std::map<std::string, std::vector<int64_t>>& dynamic_axes, int64_t count, int64_t seed) {
  PARITY_CHECK(!samples.empty(), kInvalidArgument, "the data loader gave no samples");
  SampleSets sets;
  // Conversion: the extremes of every dynamic axis.
  std::set<size_t> extremes;
  for (const auto& [name, axes] : dynamic_axes) {
    for (int64_t axis : axes) {
      size_t smallest = 0, largest = 0;
      for (size_t i = 0; i < samples.size(); ++i) {
        const Tensor* t = samples[i].find(name);
        if (!t || axis >= t->rank()) continue;
        const Tensor& lo = samples[smallest].at(name);
        const Tensor& hi = samples[largest].at(name);
        if (t->dim(axis) < lo.dim(axis)) smallest = i;
        if (t->dim(axis) > hi.dim(axis)) largest = i;
      }
      extremes.insert(smallest);
      extremes.insert(largest);
    }
  }
  if (extremes.empty()) extremes.insert(0);
  for (size_t i : extremes) sets.by_kind["conversion"].push_back(samples[i]);

  std::vector<size_t> order(samples.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(static_cast<uint64_t>(seed));
  std::shuffle(order.begin(), order.end(), rng);
  const size_t take = std::min(samples.size(), static_cast<size_t>(std::max<int64_t>(count, 1)));
  std::vector<size_t> chosen(order.begin(), order.begin() + take);
  std::sort(chosen.begin(), chosen.end());
  for (size_t i : chosen) sets.by_kind["correctness"].push_back(samples[i]);
  sets.by_kind["profiling"].push_back(samples[order.front()]);
  return sets;
}

std::vector<AxisProfile> axis_profiles(const SampleSets& sets, const std::map<std::string, std::vector<int64_t>>& dynamic_axes,
                                       std::optional<int64_t> batch_dim, int64_t max_batch_size) {
  std::vector<AxisProfile> profiles;
  const TensorMap& profiling = sets.of("profiling").front();
  for (const auto& [name, tensor] : profiling) {
    if (batch_dim) profiles.push_back({name, *batch_dim, 1, 1, max_batch_size});
    auto it = dynamic_axes.find(name);
    if (it == dynamic_axes.end()) continue;
    for (int64_t axis : it->second) {
      AxisProfile p{name, model_axis(axis, batch_dim), tensor.dim(axis), tensor.dim(axis), tensor.dim(axis)};
      for (const auto& kind : sample_kinds())
        for (const auto& sample : sets.of(kind))
          if (const Tensor* t = sample.find(name); t && axis < t->rank()) {
            p.min = std::min(p.min, t->dim(axis));
            p.max = std::max(p.max, t->dim(axis));
          }
      profiles.push_back(p);
    }
  }
  std::sort(profiles.begin(), profiles.end(), [](const AxisProfile& a, const AxisProfile& b) {
    return std::tie(a.input, a.axis) < std::tie(b.input, b.axis);
  });
  return profiles;
}

void save_sample_sets(const fs::path& dir, const SampleSets& sets) {
  for (const auto& kind : sample_kinds()) {
    const auto& samples = sets.of(kind);
    fs::create_directories(dir / kind);
    for (size_t i = 0; i < samples.size(); ++i)
      write_npz((dir / kind / (std::to_string(i) + ".npz")).string(), samples[i]);
  }
}

SampleSets load_sample_sets(const fs::path& dir) {
  SampleSets sets;
  for (const auto& kind : sample_kinds()) {
    auto& samples = sets.by_kind[kind];
    for (size_t i = 0;; ++i) {
      const fs::path file = dir / kind / (std::to_string(i) + ".npz");
      if (!fs::is_regular_file(file)) break;
      samples.push_back(read_npz(file.string()));
    }
  }
  return sets;
}

int64_t count_non_finite(const Tensor& tensor) {
  if (!is_floating(tensor.dtype())) return 0;
  int64_t count = 0;
  if (tensor.dtype() == DType::kFloat32) {
    for (float v : tensor.values<float>()) count += !std::isfinite(v);
    return count;
  }
  for (int64_t i = 0; i < tensor.numel(); ++i) count += !std::isfinite(tensor.value_as_double(i));
  return count;
}

}  // namespace parity::tools::navigator
