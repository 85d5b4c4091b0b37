// How a plan file stores each constant: once, at the precision its layers compute it in. A weight
// read only by fp16 (bf16) layers, which round it to fp16 (bf16) anyway, is stored as 2-byte values;
// one read only as an int8 layer's data operand, which quantizes it per channel anyway, as int8
// values and per-channel scales. Loading decodes them to the float32 values those layers' wrappers
// would have made of the original (runtime/reduced_precision.h), so a loaded plan computes what
// the built session computes, bit for bit.
#pragma once

#include <map>
#include <vector>

#include "core/tensor.h"

namespace parity::runtime {

class Subgraph;

namespace plan {

/// The stored form of one constant.
struct WeightStorage {
  DType precision = DType::kFloat32;  // kFloat32 (as is), kFloat16, kBFloat16 or kInt8
  int64_t axis = -1;                  // int8: the axis of the per-channel scales (-1: one scale)
  bool operator==(const WeightStorage&) const = default;
};

/// The storage of `g`'s float32 constants (initializers and folded values) by slot, for those
/// whose every reader is a layer that reduces it to one precision (and, for int8, one channel
/// axis); the others are stored as they are and are not listed. Constants that are graph outputs,
/// inputs of fused tails, or of graphs with nested bodies (which read outer values by name) are
/// kept as they are.
std::map<int, WeightStorage> plan_weight_storage(const Subgraph& g);

/// A constant's stored bytes and, for int8, its channel scales.
struct EncodedWeights {
  Tensor bytes;  // kFloat16, kBFloat16 or kInt8 values in the constant's shape
  std::vector<float> scales;
};
/// Encodes float32 `t` for `storage` (not kFloat32).
EncodedWeights encode_weights(const Tensor& t, const WeightStorage& storage);
/// The float32 tensor `stored` (kFloat16, kBFloat16 or kInt8 values) stands for; throws
/// kInvalidModel (the plan is inconsistent) when the scales do not fit the axis.
Tensor decode_weights(const Tensor& stored, const std::vector<float>& scales, int64_t axis);

}  // namespace plan
}  // namespace parity::runtime
