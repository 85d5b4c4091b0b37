// A setting that may differ per output (or input), with a default: Polygraphy's
// "value, or a dict whose '' key is the default" convention (--atol 1e-3 out0:1e-2).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace parity::compare {

template <typename T>
/// A value per output name with a default for the others (tolerances such as --atol out:1e-3).
class PerOutput {
 public:
  /// Every output gets `default_value`.
  PerOutput(T default_value) : default_(std::move(default_value)) {}  // NOLINT(implicit)

  /// Sets the value for `name`; an empty name sets the default.
  PerOutput& set(const std::string& name, T value) {
    if (name.empty()) default_ = std::move(value);
    else values_[name] = std::move(value);
    return *this;
  }
  const T& get(const std::string& name) const {  ///< The value for `name`, or the default.
    auto it = values_.find(name);
    return it == values_.end() ? default_ : it->second;
  }
  const T& default_value() const { return default_; }  ///< The value for outputs without their own.
  /// Names given explicitly (so callers can check they exist).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [name, value] : values_) out.push_back(name);
    return out;
  }

 private:
  T default_;
  std::map<std::string, T> values_;
};

}  // namespace parity::compare
