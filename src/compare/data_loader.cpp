#include "compare/data_loader.h"

#include <cmath>

#include "core/low_precision.h"
#include "core/random_state.h"
#include "core/logger.h"

namespace parity::compare {

namespace {

bool is_shape_tensor(const TensorMeta& meta, DType dtype, const Shape* user_shape) {
  if (!user_shape || !is_integer(dtype) || !meta.shape.is_static() || meta.shape.dims.size() != 1)
    return false;
  return static_cast<int64_t>(user_shape->size()) == meta.shape.dims[0].value;
}

// Python's int(x): truncation toward zero.
int64_t to_int(double v) {
  PARITY_CHECK(std::isfinite(v), kInvalidArgument, "value range bound ", v,
               " is not a finite number for an integer input");
  return static_cast<int64_t>(std::trunc(v));
}

}  // namespace

Shape default_static_shape(const DimShape& shape) {
  Shape out;
  for (const Dim& d : shape.dims) {
    if (d.is_static()) out.push_back(d.value);
    else if (d.min) out.push_back(*d.min);
    else if (d.max) out.push_back(*d.max);
    else out.push_back(1);
  }
  return out;
}

DataLoader& DataLoader::seed(int64_t seed) {
  PARITY_CHECK(seed >= 0, kInvalidArgument, "seed must be >= 0, got ", seed);
  seed_ = seed;
  return *this;
}

DataLoader& DataLoader::iterations(int64_t count) {
  PARITY_CHECK(count >= 0, kInvalidArgument, "iterations must be >= 0, got ", count);
  iterations_ = count;
  return *this;
}

DataLoader& DataLoader::val_range(const std::string& name, ValueRange range) {
  PARITY_CHECK(!(range.min > range.max), kInvalidArgument, "value range", name.empty() ? "" : " for '",
               name, name.empty() ? "" : "'", " is empty: [", range.min, ", ", range.max, "]");
  ranges_[name] = range;
  return *this;
}

DataLoader& DataLoader::input_shape(const std::string& name, Shape shape) {
  int64_t elements = 1;
  for (int64_t d : shape) {
    PARITY_CHECK(d >= 0, kInvalidArgument, "input shape for '", name, "' has a negative dimension: ",
                 shape_to_string(shape));
    PARITY_CHECK(d == 0 || !__builtin_mul_overflow(elements, d, &elements), kInvalidArgument, "input shape for '",
                 name, "' ", shape_to_string(shape), " has more elements than a 64-bit count can hold");
  }
  shapes_[name] = std::move(shape);
  return *this;
}

DataLoader& DataLoader::input_dtype(const std::string& name, DType dtype) {
  dtypes_[name] = dtype;
  return *this;
}

DataLoader& DataLoader::input_metadata(TensorMetadata metadata) {
  set_input_metadata(metadata);
  return *this;
}

void DataLoader::set_input_metadata(const TensorMetadata& metadata) {
  // Told the inputs it knows already (each Comparator::run tells a shared loader again): nothing
  // is written, so threads may keep reading feeds meanwhile.
  if (metadata_ && *metadata_ == metadata) return;
  metadata_ = metadata;
  check_overrides();
}

void DataLoader::check_overrides() const {
  PARITY_ASSERT(metadata_.has_value());
  const std::string inputs = metadata_->empty() ? "(none)" : join_names(metadata_->names());
  for (const auto& [name, range] : ranges_)
    PARITY_CHECK(name.empty() || metadata_->contains(name), kInvalidArgument,
                 "value range given for '", name, "', but the model has no such input; inputs: ", inputs);
  for (const auto& [name, dtype] : dtypes_)
    PARITY_CHECK(metadata_->contains(name), kInvalidArgument, "dtype given for '", name,
                 "', but the model has no such input; inputs: ", inputs);
  for (const auto& [name, shape] : shapes_) {
    const TensorMeta* meta = metadata_->find(name);
    PARITY_CHECK(meta, kInvalidArgument, "input shape given for '", name,
                 "', but the model has no such input; inputs: ", inputs);
    const DType dtype = dtypes_.count(name) ? dtypes_.at(name) : meta->dtype;
    if (meta->shape.unknown_rank || is_shape_tensor(*meta, dtype, &shape)) continue;
    PARITY_CHECK(meta->shape.accepts(shape), kInvalidArgument, "input shape ", shape_to_string(shape),
                 " for '", name, "' contradicts the model's shape ", meta->shape.to_string());
  }
}

ValueRange DataLoader::range_for(const std::string& name) const {
  if (auto it = ranges_.find(name); it != ranges_.end()) return it->second;
  if (auto it = ranges_.find(""); it != ranges_.end()) return it->second;
  return ValueRange{};
}

std::optional<TensorMap> DataLoader::feed(size_t index) {
  if (static_cast<int64_t>(index) >= iterations_) return std::nullopt;
  return generate(index);
}

TensorMap DataLoader::generate(size_t index) const {
  PARITY_CHECK(metadata_.has_value(), kInvalidArgument,
               "DataLoader has no input metadata: pass it with input_metadata() or run it through "
               "the Comparator");
  const int64_t seed = seed_ + static_cast<int64_t>(index);
  PARITY_CHECK(seed <= 0xFFFFFFFFll, kInvalidArgument, "seed ", seed, " does not fit numpy's 32-bit seed");
  logger().verbose("Generating data using numpy seed: ", seed);
  NumpyRandomState rng(static_cast<uint32_t>(seed));
  TensorMap feed;
  for (const TensorMeta& meta : *metadata_) {
    DType dtype = meta.dtype == DType::kUndefined ? DType::kFloat32 : meta.dtype;
    if (auto it = dtypes_.find(meta.name); it != dtypes_.end()) dtype = it->second;
    const Shape* user_shape = shapes_.count(meta.name) ? &shapes_.at(meta.name) : nullptr;

    if (is_shape_tensor(meta, dtype, user_shape)) {
      logger().info("Assuming ", meta.name, " is a shape tensor. Setting input values to: ",
                    shape_to_string(*user_shape));
      std::vector<int64_t> values(user_shape->begin(), user_shape->end());
      feed.set(meta.name, Tensor::from_vector<int64_t>({static_cast<int64_t>(values.size())}, values).cast(dtype));
      continue;
    }
    const Shape shape = user_shape ? *user_shape : default_static_shape(meta.shape);
    if (!user_shape && !meta.shape.is_static())
      logger().warning("Input tensor: ", meta.name, " [shape=", meta.shape.to_string(),
                       "] | Will generate data of shape: ", shape_to_string(shape),
                       ". If this is incorrect, please set --input-shapes.");
    const ValueRange range = range_for(meta.name);
    if (is_integer(dtype)) {
      feed.set(meta.name, rng.randint(to_int(range.min), to_int(range.max), shape, dtype));
    } else if (dtype == DType::kBool) {
      feed.set(meta.name, rng.randint(range.min != 0.0, range.max != 0.0, shape, dtype));
    } else if (is_floating(dtype)) {
      feed.set(meta.name, rng.uniform(range.min, range.max, shape, dtype));
    } else if (is_low_precision(dtype)) {
      // float8/float4/int4/int2: draw as float32/int32, then convert with Cast's rules.
      feed.set(meta.name, is_low_precision_integer(dtype)
                              ? rng.randint(to_int(range.min), to_int(range.max), shape, DType::kInt32).cast(dtype)
                              : rng.uniform(range.min, range.max, shape, DType::kFloat32).cast(dtype));
    } else {
      fail(ErrorCode::kUnsupported, "cannot generate random data for input '", meta.name, "' of dtype ",
           dtype_name(dtype), "; supply inputs with --load-inputs");
    }
  }
  return feed;
}

}  // namespace parity::compare
