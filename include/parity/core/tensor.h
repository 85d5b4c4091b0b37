// Tensor: contiguous, row-major, dtype + shape over a reference-counted buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"

namespace parity {

/// A concrete shape: one size (>= 0) per dimension, outermost first; empty for a scalar.
using Shape = std::vector<int64_t>;

/// Number of elements of a shape (1 for a scalar, 0 when any dimension is 0).
int64_t shape_numel(const Shape& shape);
/// Python tuple form, as Polygraphy and numpy print shapes: "(1, 3, 224, 224)", "(5,)", "()".
std::string shape_to_string(const Shape& shape);
/// Row-major strides (in elements).
std::vector<int64_t> shape_strides(const Shape& shape);

/// Memory behind a tensor. Subclasses may own heap memory, strings, or an mmapped file region.
class Storage {
 public:
  virtual ~Storage() = default;
  virtual std::byte* data() = 0;  ///< First byte of the memory; valid while the storage lives.
  virtual size_t size_bytes() const = 0;  ///< Size of the memory in bytes.
};

/// Contiguous row-major tensor.
///
/// Copies are shallow: both tensors share one buffer (cheap to pass around and to hand out as
/// runner outputs). Use clone() for an independent deep copy. Moves are O(1).
/// String tensors hold std::string elements; all other dtypes hold plain little-endian values.
class Tensor {
 public:
  Tensor() = default;  ///< An undefined tensor (dtype kUndefined, no storage).
  /// Allocates a zero-initialized tensor.
  Tensor(DType dtype, Shape shape);
  /// Allocates without zero-filling, for producers that overwrite every element (optimized
  /// kernels). String tensors are still default-constructed.
  static Tensor uninitialized(DType dtype, Shape shape);
  /// Wraps existing storage (e.g. an mmapped external-data region); byte_offset into storage.
  Tensor(DType dtype, Shape shape, std::shared_ptr<Storage> storage, size_t byte_offset = 0);

  /// A tensor of `shape` holding a copy of `values`; throws kInvalidArgument when their count does not match.
  template <typename T>
  static Tensor from_vector(const Shape& shape, const std::vector<T>& values);
  /// A rank-0 tensor holding `value`.
  template <typename T>
  static Tensor scalar(T value) {
    return from_vector<T>({}, std::vector<T>{value});
  }
  /// Builds a tensor by copying raw bytes (non-string dtypes only).
  static Tensor from_bytes(DType dtype, Shape shape, const void* bytes, size_t size_bytes);

  bool defined() const { return dtype_ != DType::kUndefined; }  ///< False for a default-constructed (undefined) tensor.
  DType dtype() const { return dtype_; }  ///< Element type.
  const Shape& shape() const { return shape_; }  ///< Dimensions, outermost first.
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }  ///< Number of dimensions.
  int64_t dim(int64_t axis) const;  ///< Size of dimension `axis` (negative counts from the end); asserts the axis is in range.
  int64_t numel() const { return numel_; }  ///< Number of elements.
  size_t size_bytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }  ///< Bytes of element data (elements times dtype_size()).

  void* raw_data() { return storage_ ? storage_->data() + offset_ : nullptr; }  ///< First byte of the elements, or nullptr without storage.
  const void* raw_data() const { return storage_ ? storage_->data() + offset_ : nullptr; }  ///< As raw_data(), read-only.

  /// Typed pointer; asserts that T matches dtype().
  template <typename T>
  T* data() {
    check_type(dtype_of_v<T>);
    return static_cast<T*>(raw_data());
  }
  /// As data(), read-only.
  template <typename T>
  const T* data() const {
    check_type(dtype_of_v<T>);
    return static_cast<const T*>(raw_data());
  }
  /// The elements as a span; asserts that T matches dtype().
  template <typename T>
  std::span<T> values() {
    return {data<T>(), static_cast<size_t>(numel_)};
  }
  /// As values(), read-only.
  template <typename T>
  std::span<const T> values() const {
    return {data<T>(), static_cast<size_t>(numel_)};
  }
  /// A copy of the elements; asserts that T matches dtype().
  template <typename T>
  std::vector<T> to_vector() const {
    auto v = values<T>();
    return std::vector<T>(v.begin(), v.end());
  }

  /// Independent deep copy.
  Tensor clone() const;
  /// Same buffer, new shape with equal element count.
  Tensor reshaped(Shape shape) const;
  /// Element-wise conversion with convert_scalar semantics (string <-> numeric unsupported).
  Tensor cast(DType dtype) const;
  /// Reads element i (flat index) as double (numeric dtypes only).
  double value_as_double(int64_t flat_index) const;
  /// True when dtypes, shapes and every byte (or string) are equal.
  bool bit_equal(const Tensor& other) const;
  /// True if the storage is shared with another Tensor object.
  bool shares_storage() const { return storage_ && storage_.use_count() > 1; }

 private:
  void check_type(DType requested) const;

  DType dtype_ = DType::kUndefined;
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<Storage> storage_;
  size_t offset_ = 0;
};

template <typename T>
Tensor Tensor::from_vector(const Shape& shape, const std::vector<T>& values) {
  Tensor t(dtype_of_v<T>, shape);
  PARITY_CHECK(static_cast<int64_t>(values.size()) == t.numel(), kInvalidArgument,
               "tensor of shape ", shape_to_string(shape), " needs ", t.numel(), " values, got ",
               values.size());
  T* out = t.data<T>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

}  // namespace parity
