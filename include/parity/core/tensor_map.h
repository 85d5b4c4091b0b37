// Ordered name -> Tensor mapping (Polygraphy's OrderedDict of arrays): feeds, outputs, saved data.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace parity {

/// Named tensors in insertion order: a runner's feed or its outputs.
class TensorMap {
 public:
  using Entry = std::pair<std::string, Tensor>;  ///< One (name, tensor) pair.
  TensorMap() = default;  ///< An empty map.
  /// The entries in order; a repeated name replaces the earlier tensor in its position.
  TensorMap(std::initializer_list<Entry> entries) {
    for (const auto& e : entries) set(e.first, e.second);
  }
  /// Inserts or replaces (keeping the original position when replacing).
  void set(const std::string& name, Tensor tensor);
  bool contains(const std::string& name) const { return find(name) != nullptr; }  ///< True when a tensor of that name is present.
  const Tensor* find(const std::string& name) const;  ///< The tensor of that name, or nullptr.
  Tensor* find(const std::string& name);  ///< As find(), mutable.
  /// Throws kNotFound listing available names.
  const Tensor& at(const std::string& name) const;
  bool erase(const std::string& name);  ///< Removes the named tensor; false when there was none.
  size_t size() const { return entries_.size(); }  ///< Number of tensors.
  bool empty() const { return entries_.empty(); }  ///< True when there are none.
  void clear() { entries_.clear(); }  ///< Removes every tensor.
  std::vector<std::string> names() const;  ///< The names in order.
  auto begin() const { return entries_.begin(); }  ///< Iterator over the (name, tensor) entries, in order.
  auto end() const { return entries_.end(); }  ///< End of the entries.
  auto begin() { return entries_.begin(); }  ///< Mutable iterator over the entries.
  auto end() { return entries_.end(); }  ///< End of the mutable entries.
  /// Deep copy of every tensor (runners may reuse their output buffers between calls).
  TensorMap clone() const;

 private:
  std::vector<Entry> entries_;
};

}  // namespace parity
