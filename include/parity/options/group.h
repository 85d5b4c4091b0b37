// Typed option groups (Polygraphy's tools/args, checked at compile time): a Group<T> declares its
// options on an ArgParser and binds each to T, by member pointer with a conversion or by a typed
// binding, so the layers below the CLI define a group and consume a plain T, and only the CLI hands
// a group the parsed Args. A binding sees only the option it was declared with (Given): no code
// looks an option up by a string that could be misspelt.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/text.h"
#include "options/args.h"

namespace parity::options {

/// What the command line gave one option.
struct Given {
  std::string flag;  ///< Its first long spelling (else its first flag; a positional's metavar), for messages.
  int count = 0;     ///< Occurrences; 0 when not given.
  /// Every value across occurrences; the default when not given and it has one.
  std::vector<std::string> values;

  /// Whether the command line gave it at least once.
  bool given() const { return count > 0; }
  /// The last value (or the default); nullopt when neither.
  std::optional<std::string> value() const {
    return values.empty() ? std::nullopt : std::optional<std::string>(values.back());
  }
};

namespace detail {
/// Reads one option for a group: kInternal when the parser that made `args` never defined `dest`
/// (the group was not added to it), a programming error rather than a silent nullopt.
Given given(const Args& args, const OptionSpec& spec);
/// As given(), for an option another group declares: not given (its default) where the parser
/// that made `args` does not define it.
Given given_if_defined(const Args& args, const OptionSpec& spec);
}  // namespace detail

/// A typed option group producing T.
template <class T>
class Group {
 public:
  /// Reads the option into the value under construction.
  using Bind = std::function<void(T&, const Given&)>;
  /// Rules across options (contradictions, implied settings), run after every binding.
  using Check = std::function<void(T&)>;

  /// Subsequent options are listed under `title` in --help (ArgParser::group).
  Group& section(std::string title) {
    Item item;
    item.section = true;
    item.spec.group = std::move(title);
    items_.push_back(std::move(item));
    return *this;
  }
  /// Adds an option bound to T.
  Group& add(OptionSpec spec, Bind bind) {
    if (spec.dest.empty()) spec.dest = default_dest(spec);
    items_.push_back(Item{false, std::move(spec), std::move(bind), false});
    return *this;
  }
  /// Reads an option that another group declares (the data loader's --input-shapes, a command's
  /// --isa): add_to() leaves it out, and parse() reads it as not given where the parser lacks it.
  Group& borrow(OptionSpec spec, Bind bind) {
    if (spec.dest.empty()) spec.dest = default_dest(spec);
    items_.push_back(Item{false, std::move(spec), std::move(bind), false, true});
    return *this;
  }
  /// Adds an option that reads nothing (a refused spelling); with `unless_defined`, add_to() skips
  /// it where the parser defines one of its flags already.
  Group& declare(OptionSpec spec, bool unless_defined = false) {
    if (spec.dest.empty()) spec.dest = default_dest(spec);
    items_.push_back(Item{false, std::move(spec), nullptr, unless_defined});
    return *this;
  }
  /// Adds a rule, run on the value after every binding, in the order added.
  Group& check(Check rule) {
    checks_.push_back(std::move(rule));
    return *this;
  }
  /// Adds another group's options, its value landing in `member`.
  template <class U>
  Group& include(const Group<U>& other, U T::*member) {
    for (const auto& o : other.items_) {
      typename Group<U>::Bind inner = o.bind;
      items_.push_back(Item{o.section, o.spec,
                            inner ? Bind([inner, member](T& t, const Given& g) { inner(t.*member, g); }) : Bind(),
                            o.unless_defined, o.borrowed});
    }
    for (const auto& rule : other.checks_) checks_.push_back([rule, member](T& t) { rule(t.*member); });
    return *this;
  }

  /// Defines the group's options and help sections on `parser`, in order; parse() then reads
  /// the Args that parser makes.
  void add_to(ArgParser& parser) const { add(parser, false); }
  /// As add_to(), leaving out every option one of whose flags the parser defines already: a
  /// command's own option of that name (its --threads) serves the group too.
  void add_missing_to(ArgParser& parser) const { add(parser, true); }

  /// Throws kInvalidArgument naming the option on a bad value, kInternal when `args` comes from a
  /// parser the group was not added to.
  T parse(const Args& args) const { return parse(args, T{}); }
  /// As parse(args), starting from `value` (a command's own defaults).
  T parse(const Args& args, T value) const {
    read(args, value, false);
    return value;
  }
  /// As parse(args), for a parser the group was added to by add_missing_to(): an option the
  /// command defines under a dest of its own (bench's list of --threads counts) reads as not given.
  T parse_where_defined(const Args& args) const {
    T value{};
    read(args, value, true);
    return value;
  }
  /// Whether the command line gave any of the group's options.
  bool any_given(const Args& args) const {
    for (const auto& o : items_)
      if (o.bind && !o.borrowed && detail::given(args, o.spec).given()) return true;
    return false;
  }
  /// The group's options, in order (man page, completion, other parsers copying them).
  std::vector<OptionSpec> specs() const {
    std::vector<OptionSpec> out;
    for (const auto& o : items_)
      if (!o.section && !o.borrowed) out.push_back(o.spec);
    return out;
  }

 private:
  template <class>
  friend class Group;
  // An option, or (section) the help-section title of the options after it, in spec.group.
  struct Item {
    bool section = false;
    OptionSpec spec;
    Bind bind;
    bool unless_defined = false;
    bool borrowed = false;  // declared by another group: never added, read where defined
  };

  void read(const Args& args, T& value, bool where_defined) const {
    for (const auto& o : items_)
      if (o.bind)
        o.bind(value, o.borrowed || where_defined ? detail::given_if_defined(args, o.spec) : detail::given(args, o.spec));
    for (const auto& rule : checks_) rule(value);
  }

  void add(ArgParser& parser, bool only_missing) const {
    for (const auto& o : items_) {
      if (o.section) {
        parser.group(o.spec.group);
        continue;
      }
      if (o.borrowed) continue;
      bool defined = false;
      for (const auto& f : o.spec.flags) defined = defined || parser.defines(f);
      if ((o.unless_defined || only_missing) && defined) continue;
      parser.add(o.spec);
    }
  }
  std::vector<Item> items_;
  std::vector<Check> checks_;
};

namespace detail {
/// Whether V is a std::optional (field() binds the value inside).
template <class V>
struct is_optional : std::false_type {};
/// A std::optional: its value type is `type`.
template <class V>
struct is_optional<std::optional<V>> : std::true_type {
  using type = V;  ///< The optional's value type.
};
/// Whether V is a std::vector (field() binds every value).
template <class V>
struct is_vector : std::false_type {};
/// A std::vector: its element type is `type`.
template <class V, class A>
struct is_vector<std::vector<V, A>> : std::true_type {
  using type = V;  ///< The vector's element type.
};

/// One value converted to V by its type: text, a number (the option named in the error).
template <class V>
V convert_value(const std::string& text, const std::string& flag) {
  if constexpr (std::is_same_v<V, std::string>) {
    return text;
  } else if constexpr (std::is_floating_point_v<V>) {
    return static_cast<V>(parse_double(text, flag));
  } else if constexpr (std::is_integral_v<V> && !std::is_same_v<V, bool>) {
    return static_cast<V>(parse_int(text, flag));
  } else {
    static_assert(!sizeof(V), "options::field: no conversion for this type; use options::convert");
  }
}

/// Calls a converter as (text, flag) or, where it takes one argument, (text).
template <class V, class Fn>
auto call_converter(const Fn& fn, const std::string& text, const std::string& flag) {
  if constexpr (std::is_invocable_v<const Fn&, const std::string&, const std::string&>)
    return fn(text, flag);
  else
    return fn(text);
}

/// Stores what `g` gave in `out` through converter `fn`: every value into a vector (the given
/// list replacing the field's), the last one into a scalar or optional; nothing when there is none.
template <class V, class Fn>
void assign(V& out, const Given& g, const Fn& fn) {
  if constexpr (is_vector<V>::value) {
    if (!g.values.empty() || g.given()) {
      V items;
      for (const auto& v : g.values) items.push_back(call_converter<typename is_vector<V>::type>(fn, v, g.flag));
      out = std::move(items);
    }
  } else if (auto v = g.value()) {
    if constexpr (is_optional<V>::value)
      out = call_converter<typename is_optional<V>::type>(fn, *v, g.flag);
    else
      out = call_converter<V>(fn, *v, g.flag);
  }
}

/// The type one value converts to: V, or the element type of a std::vector or std::optional V.
template <class V>
using element_t = typename std::conditional_t<
    is_vector<V>::value, is_vector<V>,
    std::conditional_t<is_optional<V>::value, is_optional<V>, std::type_identity<V>>>::type;
}  // namespace detail

/// Binds an option to a field, converting by the field's type: bool is a flag (given or not);
/// std::string, numbers and their std::optional take the last value (or the default) and keep the
/// field's value when there is none; std::vector takes every value.
template <class T, class V>
typename Group<T>::Bind field(V T::*member) {
  return [member](T& t, const Given& g) {
    if constexpr (std::is_same_v<V, bool>) {
      t.*member = g.given();
    } else {
      using E = detail::element_t<V>;
      detail::assign(t.*member, g, [](const std::string& text, const std::string& flag) {
        return detail::convert_value<E>(text, flag);
      });
    }
  };
}

/// A flag that turns a setting off (--no-shape-check): the field is true unless given.
template <class T>
typename Group<T>::Bind unless(bool T::*member) {
  return [member](T& t, const Given& g) { t.*member = !g.given(); };
}

/// How many times a count option was given (-v -v).
template <class T, class V>
typename Group<T>::Bind count(V T::*member) {
  return [member](T& t, const Given& g) { t.*member = static_cast<V>(g.count); };
}

/// Converts each value with `fn` (value) or (value, flag), which throws kInvalidArgument on bad text.
template <class T, class V, class Fn>
typename Group<T>::Bind convert(V T::*member, Fn fn) {
  return [member, fn](T& t, const Given& g) { detail::assign(t.*member, g, fn); };
}

/// An option with choices mapped to values of the field's type (an enum).
template <class T, class V>
typename Group<T>::Bind choice(V T::*member, std::vector<std::pair<std::string, detail::element_t<V>>> values) {
  return convert(member, [values = std::move(values)](const std::string& text, const std::string& flag) {
    for (const auto& [name, value] : values)
      if (name == text) return value;
    std::string names;
    for (const auto& entry : values) names += (names.empty() ? "" : ", ") + entry.first;
    fail(ErrorCode::kInvalidArgument, "invalid choice '", text, "' for ", flag, " (choose from ", names, ")");
  });
}

}  // namespace parity::options
