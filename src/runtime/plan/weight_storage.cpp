#include "runtime/plan/weight_storage.h"

#include <set>
#include <unordered_map>

#include "core/float16.h"
#include "core/status.h"
#include "runtime/reduced_precision.h"
#include "runtime/reduced_precision_facts.h"
#include "runtime/subgraph.h"

namespace parity::runtime::plan {

namespace {

bool has_nested_graphs(const Subgraph& g) {
  for (const auto& node : g.nodes_)
    for (const auto& [name, attr] : node.spec.attributes)
      if (attr.type == model::AttrType::kGraph || attr.type == model::AttrType::kGraphs) return true;
  return false;
}

/// Rows of `inner` elements per channel along `axis` of `shape` (1 and the count for axis -1).
int64_t inner_size(const Shape& shape, int64_t axis) {
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(axis + 1); axis >= 0 && d < shape.size(); ++d) inner *= shape[d];
  return inner;
}

}  // namespace

std::map<int, WeightStorage> plan_weight_storage(const Subgraph& g) {
  if (has_nested_graphs(g)) return {};
  std::unordered_map<int, const Tensor*> constants;
  for (const auto& [slot, value] : g.constants_)
    if (value.is_tensor() && value.tensor().dtype() == DType::kFloat32) constants[slot] = &value.tensor();
  for (const auto& [slot, value] : g.plan_time_values_)
    if (value.is_tensor() && value.tensor().dtype() == DType::kFloat32) constants[slot] = &value.tensor();
  std::map<int, WeightStorage> storage;
  std::set<int> as_is(g.output_slots_.begin(), g.output_slots_.end());
  for (const auto& node : g.nodes_) {
    if (node.folded) continue;
    for (const auto& tail : node.tails) as_is.insert(tail.inputs.begin(), tail.inputs.end());
    const std::set<int> kernel_inputs(node.kernel_inputs.begin(), node.kernel_inputs.end());
    for (int s : node.inputs)
      if (!kernel_inputs.count(s)) as_is.insert(s);
    for (size_t k = 0; k < node.kernel_inputs.size(); ++k) {
      const int slot = node.kernel_inputs[k];
      auto constant = constants.find(slot);
      if (constant == constants.end()) continue;
      if (!reduces_layer_input(node.kernel_spec, node.precision, k)) {
        as_is.insert(slot);
        continue;
      }
      WeightStorage want{node.precision, -1};
      if (node.precision == DType::kInt8) want.axis = int8_weight_axis(node.kernel_spec, k, constant->second->rank());
      auto [it, added] = storage.try_emplace(slot, want);
      if (!added && !(it->second == want)) as_is.insert(slot);
    }
  }
  for (int slot : as_is) storage.erase(slot);
  return storage;
}

EncodedWeights encode_weights(const Tensor& t, const WeightStorage& storage) {
  PARITY_ASSERT(t.dtype() == DType::kFloat32, "plan: only float32 constants are stored reduced");
  EncodedWeights out;
  const float* src = t.data<float>();
  if (storage.precision == DType::kInt8) {
    QuantizedWeights q = quantize_weights_int8(t, storage.axis);
    out.bytes = std::move(q.values);
    out.scales = std::move(q.scales);
    return out;
  }
  PARITY_ASSERT(storage.precision == DType::kFloat16 || storage.precision == DType::kBFloat16,
                "plan: no stored form for ", dtype_name(storage.precision));
  // Rounded as the layer rounds it (round_floats_to), then the exact bits of the rounded value.
  std::vector<float> rounded(src, src + t.numel());
  round_floats_to(storage.precision, rounded.data(), t.numel());
  out.bytes = Tensor::uninitialized(storage.precision, t.shape());
  auto* bits = static_cast<uint16_t*>(out.bytes.raw_data());
  for (int64_t i = 0; i < t.numel(); ++i)
    bits[i] = storage.precision == DType::kFloat16 ? Float16(rounded[i]).bits : BFloat16(rounded[i]).bits;
  return out;
}

Tensor decode_weights(const Tensor& stored, const std::vector<float>& scales, int64_t axis) {
  Tensor out = Tensor::uninitialized(DType::kFloat32, stored.shape());
  float* dst = out.data<float>();
  const int64_t n = stored.numel();
  if (stored.dtype() == DType::kFloat16 || stored.dtype() == DType::kBFloat16) {
    const auto* bits = static_cast<const uint16_t*>(stored.raw_data());
    for (int64_t i = 0; i < n; ++i)
      dst[i] = stored.dtype() == DType::kFloat16 ? static_cast<float>(Float16::from_bits(bits[i]))
                                                 : static_cast<float>(BFloat16::from_bits(bits[i]));
    return out;
  }
  PARITY_CHECK(stored.dtype() == DType::kInt8, kInvalidModel, "a constant is stored as ", dtype_name(stored.dtype()),
               ", which plans do not use for weights");
  const bool per_tensor = axis < 0;
  PARITY_CHECK(per_tensor ? scales.size() == 1
                          : axis < stored.rank() && static_cast<int64_t>(scales.size()) == stored.shape()[axis],
               kInvalidModel, "an int8 constant's ", scales.size(), " scales do not fit its axis ", axis);
  const int64_t inner = inner_size(stored.shape(), axis), channels = static_cast<int64_t>(scales.size());
  const int8_t* values = stored.data<int8_t>();
  // As reduce_constant dequantizes: the float product of the integer and its channel's scale.
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(values[i]) * scales[(i / inner) % channels];
  return out;
}

}  // namespace parity::runtime::plan
