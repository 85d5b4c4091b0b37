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
  int64_t value = -1;            ///< >= 0 when static, -1 when dynamic
  std::string symbol;            ///< symbolic name of a dynamic dimension ("" if anonymous)
  std::optional<int64_t> min;    ///< Lower bound of a dynamic dimension, if known.
  std::optional<int64_t> max;  ///< Upper bound of a dynamic dimension, if known.

  Dim() = default;  ///< A dynamic, anonymous, unbounded dimension.
  /// A static dimension of size `v`.
  Dim(int64_t v) : value(v) {}  // NOLINT(implicit): shapes are written as {1, 3, 224, 224}
  /// A dynamic dimension, optionally named and bounded.
  static Dim dynamic(std::string symbol = {}, std::optional<int64_t> min = {},
                     std::optional<int64_t> max = {}) {
    Dim d;
    d.symbol = std::move(symbol);
    d.min = min;
    d.max = max;
    return d;
  }
  bool is_static() const { return value >= 0; }  ///< True for a fixed size.
  bool operator==(const Dim& o) const {  ///< Equal value, symbol and bounds.
    return value == o.value && symbol == o.symbol && min == o.min && max == o.max;
  }
  /// The size, or the symbol quoted (-1 when anonymous) with any bounds as "[min..max]".
  std::string to_string() const;
};

/// Shape possibly containing dynamic dimensions.
struct DimShape {
  std::vector<Dim> dims;  ///< The dimensions, outermost first.
  bool unknown_rank = false;  ///< true when not even the rank is known

  DimShape() = default;  ///< A scalar (rank 0).
  DimShape(std::initializer_list<Dim> d) : dims(d) {}  ///< From dimensions: {1, 3, Dim::dynamic("batch")}.
  explicit DimShape(const Shape& shape);  ///< Every dimension static.
  bool is_static() const;  ///< True when the rank is known and every dimension is static.
  /// Concrete shape; throws kInvalidArgument when a dimension is dynamic.
  Shape to_static() const;
  /// True when `shape` fits (same rank, equal static dims, dynamic dims within bounds).
  bool accepts(const Shape& shape) const;
  std::string to_string() const;  ///< "(1, 3, 'batch', -1)"-like, as Polygraphy prints
  bool operator==(const DimShape& o) const { return dims == o.dims && unknown_rank == o.unknown_rank; }  ///< Equal dimensions and rank knowledge.
};

/// A tensor's name, dtype and (possibly dynamic) shape.
struct TensorMeta {
  std::string name;  ///< The tensor's name.
  DType dtype = DType::kUndefined;  ///< kUndefined when unknown
  DimShape shape;  ///< Its shape (may be dynamic or of unknown rank).
  std::string to_string() const;  ///< "x [dtype=float32, shape=(1, 3, 224, 224)]"
};

/// Ordered collection of tensor metadata, printed like `{x [dtype=float32, shape=(1, 3)], ...}`.
class TensorMetadata {
 public:
  /// Adds a tensor, or replaces the dtype and shape of the one of that name (order kept); returns *this.
  TensorMetadata& add(std::string name, DType dtype, DimShape shape);
  bool contains(const std::string& name) const { return find(name) != nullptr; }  ///< True when a tensor of that name is listed.
  const TensorMeta* find(const std::string& name) const;  ///< The tensor of that name, or nullptr.
  TensorMeta* find(const std::string& name);  ///< As find(), mutable.
  /// Throws kNotFound naming the available tensors when missing.
  const TensorMeta& at(const std::string& name) const;
  size_t size() const { return entries_.size(); }  ///< Number of tensors.
  bool empty() const { return entries_.empty(); }  ///< True when there are none.
  std::vector<std::string> names() const;  ///< The names in order.
  auto begin() const { return entries_.begin(); }  ///< Iterator over the TensorMeta entries, in order.
  auto end() const { return entries_.end(); }  ///< End of the entries.
  auto begin() { return entries_.begin(); }  ///< Mutable iterator over the entries.
  auto end() { return entries_.end(); }  ///< End of the mutable entries.
  /// `{x [dtype=float32, shape=(1, 3)], ...}`, as Polygraphy prints it.
  std::string to_string() const;
  bool operator==(const TensorMetadata& o) const;  ///< Same entries in the same order.

 private:
  std::vector<TensorMeta> entries_;
};

/// Comma-separated list of names, for error messages: "a, b, c".
std::string join_names(const std::vector<std::string>& names, const std::string& sep = ", ");

}  // namespace parity
