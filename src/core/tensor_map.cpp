#include "core/tensor_map.h"

#include "core/metadata.h"

namespace parity {

void TensorMap::set(const std::string& name, Tensor tensor) {
  if (Tensor* t = find(name)) {
    *t = std::move(tensor);
  } else {
    entries_.emplace_back(name, std::move(tensor));
  }
}

const Tensor* TensorMap::find(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.first == name) return &e.second;
  return nullptr;
}

Tensor* TensorMap::find(const std::string& name) {
  for (auto& e : entries_)
    if (e.first == name) return &e.second;
  return nullptr;
}

const Tensor& TensorMap::at(const std::string& name) const {
  const Tensor* t = find(name);
  PARITY_CHECK(t, kNotFound, "no tensor named '", name, "'; available: ", join_names(names()));
  return *t;
}

bool TensorMap::erase(const std::string& name) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->first == name) {
      entries_.erase(it);
      return true;
    }
  }
  return false;
}

std::vector<std::string> TensorMap::names() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.first);
  return out;
}

TensorMap TensorMap::clone() const {
  TensorMap out;
  for (const auto& e : entries_) out.entries_.emplace_back(e.first, e.second.clone());
  return out;
}

}  // namespace parity
