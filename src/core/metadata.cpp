#include "core/metadata.h"

namespace parity {

std::string Dim::to_string() const {
  if (is_static()) return std::to_string(value);
  std::string s = symbol.empty() ? std::string("-1") : "'" + symbol + "'";
  if (min || max) {
    s += "[";
    s += min ? std::to_string(*min) : std::string("?");
    s += "..";
    s += max ? std::to_string(*max) : std::string("?");
    s += "]";
  }
  return s;
}

DimShape::DimShape(const Shape& shape) {
  for (int64_t d : shape) dims.emplace_back(d);
}

bool DimShape::is_static() const {
  if (unknown_rank) return false;
  for (const auto& d : dims)
    if (!d.is_static()) return false;
  return true;
}

Shape DimShape::to_static() const {
  PARITY_CHECK(is_static(), kInvalidArgument, "shape ", to_string(), " has dynamic dimensions");
  Shape s;
  for (const auto& d : dims) s.push_back(d.value);
  return s;
}

bool DimShape::accepts(const Shape& shape) const {
  if (unknown_rank) return true;
  if (shape.size() != dims.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i) {
    const Dim& d = dims[i];
    if (d.is_static()) {
      if (d.value != shape[i]) return false;
    } else {
      if (d.min && shape[i] < *d.min) return false;
      if (d.max && shape[i] > *d.max) return false;
    }
  }
  return true;
}

std::string DimShape::to_string() const {
  if (unknown_rank) return "None";
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += dims[i].to_string();
  }
  if (dims.size() == 1) s += ",";
  return s + ")";
}

std::string TensorMeta::to_string() const {
  std::string s = name + " [dtype=";
  s += dtype == DType::kUndefined ? std::string("None") : std::string(dtype_name(dtype));
  s += ", shape=" + shape.to_string() + "]";
  return s;
}

TensorMetadata& TensorMetadata::add(std::string name, DType dtype, DimShape shape) {
  if (auto* existing = find(name)) {
    existing->dtype = dtype;
    existing->shape = std::move(shape);
  } else {
    entries_.push_back({std::move(name), dtype, std::move(shape)});
  }
  return *this;
}

const TensorMeta* TensorMetadata::find(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

TensorMeta* TensorMetadata::find(const std::string& name) {
  for (auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

const TensorMeta& TensorMetadata::at(const std::string& name) const {
  const auto* e = find(name);
  PARITY_CHECK(e, kNotFound, "no tensor named '", name, "'; available: ", join_names(names()));
  return *e;
}

std::vector<std::string> TensorMetadata::names() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.name);
  return out;
}

std::string TensorMetadata::to_string() const {
  std::string s = "{";
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (i) s += ",\n ";
    s += entries_[i].to_string();
  }
  return s + "}";
}

bool TensorMetadata::operator==(const TensorMetadata& o) const {
  if (entries_.size() != o.entries_.size()) return false;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const auto& a = entries_[i];
    const auto& b = o.entries_[i];
    if (a.name != b.name || a.dtype != b.dtype || !(a.shape == b.shape)) return false;
  }
  return true;
}

std::string join_names(const std::vector<std::string>& names, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) s += sep;
    s += names[i];
  }
  return s.empty() ? std::string("(none)") : s;
}

}  // namespace parity
