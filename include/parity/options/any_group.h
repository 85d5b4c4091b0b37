// Typed option groups whose types only their owners know: each runner defines a Group of its own
// options type, the registry holds them side by side as AnyGroup, and a command parses them all
// into one GroupValues that travels down to the runner factories, which read their own type back.
// Nothing is looked up by a string: the key is the options type itself.
#pragma once

#include <map>
#include <memory>
#include <typeindex>
#include <utility>
#include <vector>

#include "options/group.h"

namespace parity::options {

/// Parsed values of several groups, one per options type.
class GroupValues {
 public:
  /// Stores `value` as the value of its type, replacing an earlier one.
  template <class T>
  void set(T value) {
    values_[std::type_index(typeid(T))] = std::make_shared<const T>(std::move(value));
  }
  /// The stored value of type T; null when none was stored.
  template <class T>
  const T* find() const {
    const auto it = values_.find(std::type_index(typeid(T)));
    return it == values_.end() ? nullptr : static_cast<const T*>(it->second.get());
  }
  /// The stored value of type T, or `fallback` when none was stored (built from the C++ API).
  template <class T>
  T get_or(T fallback) const {
    const T* value = find<T>();
    return value ? *value : std::move(fallback);
  }
  /// Whether no value is stored.
  bool empty() const { return values_.empty(); }

 private:
  // Values are immutable once stored, so copies of a GroupValues share them.
  std::map<std::type_index, std::shared_ptr<const void>> values_;
};

/// A Group<T> with T erased: declares the group's options and parses its T into GroupValues.
class AnyGroup {
 public:
  /// No options.
  AnyGroup() = default;
  /// Holds `group`; parse_into() stores a T.
  template <class T>
  AnyGroup(Group<T> group)  // NOLINT(google-explicit-constructor): registrations write `.options = group()`
      : impl_(std::make_shared<Model<T>>(std::move(group))) {}

  /// Whether it holds a group.
  explicit operator bool() const { return impl_ != nullptr; }
  /// Adds every option; a flag the parser defines already throws (ArgParser::add).
  void add_to(ArgParser& parser) const {
    if (impl_) impl_->add_to(parser);
  }
  /// Adds the options no flag of which the parser defines already (a command's own --threads
  /// serves the group too).
  void add_missing_to(ArgParser& parser) const {
    if (impl_) impl_->add_missing_to(parser);
  }
  /// Parses the group's value from `args` (made by a parser the group was added to by
  /// add_missing_to(); Group::parse_where_defined) into `values`.
  void parse_into(const Args& args, GroupValues& values) const {
    if (impl_) impl_->parse_into(args, values);
  }
  /// The group's options (man pages, completion).
  std::vector<OptionSpec> specs() const { return impl_ ? impl_->specs() : std::vector<OptionSpec>{}; }

 private:
  struct Concept {
    virtual ~Concept() = default;
    virtual void add_to(ArgParser& parser) const = 0;
    virtual void add_missing_to(ArgParser& parser) const = 0;
    virtual void parse_into(const Args& args, GroupValues& values) const = 0;
    virtual std::vector<OptionSpec> specs() const = 0;
  };
  template <class T>
  struct Model final : Concept {
    explicit Model(Group<T> g) : group(std::move(g)) {}
    void add_to(ArgParser& parser) const override { group.add_to(parser); }
    void add_missing_to(ArgParser& parser) const override { group.add_missing_to(parser); }
    void parse_into(const Args& args, GroupValues& values) const override {
      values.set(group.parse_where_defined(args));
    }
    std::vector<OptionSpec> specs() const override { return group.specs(); }
    Group<T> group;
  };
  std::shared_ptr<const Concept> impl_;
};

}  // namespace parity::options
