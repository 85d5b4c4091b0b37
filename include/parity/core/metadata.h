// TensorMetadata: ordered name -> (dtype, shape) with dynamic/symbolic dimensions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "core/tensor.h"

namespace parity {

/// One dimension: a fixed size, or dynamic (optionally named, e.g. "batch", with bounds).
struct Dim {
  int64_t value = -1;            // >= 0 when static, -1 when dynamic
  std::string symbol;            // symbolic name of a dynamic dimension ("" if anonymous)
  std::optional<int64_t> min;    // bounds of a dynamic dimension, if known
  std::optional<int64_t> max;

  Dim() = default;
  Dim(int64_t v) : value(v) {}  // NOLINT(implicit): shapes are written as {1, 3, 224, 224}
  static Dim dynamic(std::string symbol = {}, std::optional<int64_t> min = {},
                     std::optional<int64_t> max = {}) {
    Dim d;
    d.symbol = std::move(symbol);
    d.min = min;
    d.max = max;
    return d;
  }
  bool is_static() const { return value >= 0; }
  bool operator==(const Dim& o) const {
    return value == o.value && symbol == o.symbol && min == o.min && max == o.max;
  }
  std::string to_string() const;
};

/// Shape possibly containing dynamic dimensions.
struct DimShape {
  std::vector<Dim> dims;
  bool unknown_rank = false;  // true when not even the rank is known

  DimShape() = default;
  DimShape(std::initializer_list<Dim> d) : dims(d) {}
  explicit DimShape(const Shape& shape);
  bool is_static() const;
  /// Concrete shape; throws kInvalidArgument when a dimension is dynamic.
  Shape to_static() const;
  /// True when `shape` fits (same rank, equal static dims, dynamic dims within bounds).
  bool accepts(const Shape& shape) const;
  std::string to_string() const;  // "(1, 3, 'batch', -1)"-like, as Polygraphy prints
  bool operator==(const DimShape& o) const { return dims == o.dims && unknown_rank == o.unknown_rank; }
};

/// A tensor's name, dtype and (possibly dynamic) shape.
struct TensorMeta {
  std::string name;
  DType dtype = DType::kUndefined;  // kUndefined when unknown
  DimShape shape;
  std::string to_string() const;  // "x [dtype=float32, shape=(1, 3, 224, 224)]"
};

/// Ordered collection of tensor metadata, printed like `{x [dtype=float32, shape=(1, 3)], ...}`.
class TensorMetadata {
 public:
  TensorMetadata& add(std::string name, DType dtype, DimShape shape);
  bool contains(const std::string& name) const { return find(name) != nullptr; }
  const TensorMeta* find(const std::string& name) const;
  TensorMeta* find(const std::string& name);
  /// Throws kNotFound naming the available tensors when missing.
  const TensorMeta& at(const std::string& name) const;
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  std::vector<std::string> names() const;
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  auto begin() { return entries_.begin(); }
  auto end() { return entries_.end(); }
  std::string to_string() const;
  bool operator==(const TensorMetadata& o) const;

 private:
  std::vector<TensorMeta> entries_;
};

/// Comma-separated list of names, for error messages: "a, b, c".
std::string join_names(const std::vector<std::string>& names, const std::string& sep = ", ");

}  // namespace parity
