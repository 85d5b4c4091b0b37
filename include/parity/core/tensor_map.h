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
  using Entry = std::pair<std::string, Tensor>;
  TensorMap() = default;
  TensorMap(std::initializer_list<Entry> entries) {
    for (const auto& e : entries) set(e.first, e.second);
  }
  /// Inserts or replaces (keeping the original position when replacing).
  void set(const std::string& name, Tensor tensor);
  bool contains(const std::string& name) const { return find(name) != nullptr; }
  const Tensor* find(const std::string& name) const;
  Tensor* find(const std::string& name);
  /// Throws kNotFound listing available names.
  const Tensor& at(const std::string& name) const;
  bool erase(const std::string& name);
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  void clear() { entries_.clear(); }
  std::vector<std::string> names() const;
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  auto begin() { return entries_.begin(); }
  auto end() { return entries_.end(); }
  /// Deep copy of every tensor (runners may reuse their output buffers between calls).
  TensorMap clone() const;

 private:
  std::vector<Entry> entries_;
};

}  // namespace parity
