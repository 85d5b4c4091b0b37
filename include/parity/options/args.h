// Small argparse-like command-line parser with Polygraphy's habits: nargs '+' lists,
// repeatable options, --opt=value, negative numbers as values, grouped --help.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/text.h"

namespace parity::options {

/// How many values an option takes.
enum class Arity {
  kFlag,       ///< No value; present or not.
  kCount,      ///< No value; counts occurrences (-v -v, or -vv).
  kOne,        ///< Exactly one value; the last occurrence wins.
  kOneOrMore,  ///< nargs='+': values until the next option; repeated occurrences append.
  kAny,        ///< nargs='*': as kOneOrMore, but no value is allowed too.
  kRemainder,  ///< argparse.REMAINDER: every token after the flag, options included (a command line).
};

/// One command-line option: its flags, help, value name and arity.
struct OptionSpec {
  std::vector<std::string> flags;  ///< Its spellings, e.g. {"-o", "--output"}; empty means positional.
  std::string dest;                ///< Key in Args; when empty, add() sets default_dest().
  std::string help;                ///< Help text shown after the flags in --help.
  std::string metavar;             ///< Value name in usage and help; when empty, add() sets the dest in upper case.
  Arity arity = Arity::kOne;       ///< How many values it takes.
  std::vector<std::string> choices;  ///< Allowed values, if non-empty (others throw kInvalidArgument).
  std::optional<std::string> default_value;  ///< What get() and list() give when it is not given; shown in --help.
  bool required = false;  ///< parse() throws kInvalidArgument when it is not given.
  std::string group;  ///< Title of its help section; when empty, add() sets the parser's current group().
};

/// The dest an option without one gets: its longest flag without dashes, '-' as '_'.
std::string default_dest(const OptionSpec& spec);

/// Parsed values, keyed by dest.
class Args {
 public:
  /// Whether the command line gave `dest` at least once (a default does not count).
  bool has(const std::string& dest) const;
  /// Whether flag `dest` was given: has(dest).
  bool flag(const std::string& dest) const { return has(dest); }
  /// How many times `dest` was given (`-v -v` gives 2); 0 when not given.
  int count(const std::string& dest) const;
  /// Single value (last occurrence) or default; nullopt when absent without default.
  std::optional<std::string> get(const std::string& dest) const;
  /// get(dest), or `fallback` when that is nullopt.
  std::string get_or(const std::string& dest, const std::string& fallback) const;
  /// All values given to a list option, across occurrences; when none, the default as one item,
  /// or nothing.
  std::vector<std::string> list(const std::string& dest) const;
  /// get(dest) as a number; throws kInvalidArgument naming --dest when it is not one.
  std::optional<double> get_double(const std::string& dest) const;
  /// get(dest) as an integer; throws kInvalidArgument naming --dest when it is not one.
  std::optional<int64_t> get_int(const std::string& dest) const;
  /// The options in the order the user gave them (dest names), e.g. runner flags order.
  const std::vector<std::string>& order() const { return order_; }
  /// Every option occurrence (dest names), repeats included, in command-line order:
  /// `--ref --ort --ref` gives ref, ort, ref where order() gives ref, ort.
  const std::vector<std::string>& occurrences() const { return occurrences_; }

  /// Whether the parser that made these Args defines `dest` (typed groups check theirs).
  bool declares(const std::string& dest) const { return declared_.count(dest) > 0; }

  // Used by the parser.
  /// Records that the parser defines `dest` (see declares()).
  void declare(const std::string& dest) { declared_.insert(dest); }
  /// Appends one value of `dest`.
  void add_value(const std::string& dest, std::string value);
  /// Counts one occurrence of `dest`: appended to occurrences(), and to order() the first time.
  void add_presence(const std::string& dest);
  /// Sets the value get() and list() give `dest` when the command line gave it none.
  void set_default(const std::string& dest, std::string value);

 private:
  std::map<std::string, std::vector<std::string>> values_;
  std::map<std::string, int> counts_;
  std::map<std::string, std::string> defaults_;
  std::vector<std::string> order_;
  std::vector<std::string> occurrences_;
  std::set<std::string> declared_;
};

/// The command-line parser: option specs in groups, Polygraphy's spellings, "did you mean" errors.
class ArgParser {
 public:
  /// A parser for `prog` (named in usage and errors), with `description` shown in --help.
  ArgParser(std::string prog, std::string description);

  /// Adds an option, filling in an empty dest, metavar and group; returns *this so definitions
  /// chain. A flag defined twice is a parity bug (kInternal).
  ArgParser& add(OptionSpec spec);
  /// Sets the help-section title used by subsequent add() calls without an explicit group.
  ArgParser& group(std::string title);
  /// Appends text shown after the options in --help (examples, notes).
  void set_epilog(std::string epilog) { epilog_ = std::move(epilog); }

  /// Parses args (without the program/command words). Throws Error(kInvalidArgument) on misuse.
  Args parse(const std::vector<std::string>& args) const;
  /// The --help text: usage, description, the options by help section, then the epilog.
  std::string help() const;
  /// The program name given to the constructor.
  const std::string& prog() const { return prog_; }
  /// Whether an option defined so far is spelt `flag`.
  bool defines(const std::string& flag) const { return find_flag(flag) != nullptr; }
  /// The options defined so far, in order (e.g. to copy some of another parser's options).
  const std::vector<OptionSpec>& options() const { return options_; }

 private:
  const OptionSpec* find_flag(const std::string& flag) const;
  bool looks_like_option(const std::string& token) const;

  std::string prog_;
  std::string description_;
  std::string epilog_;
  std::string current_group_ = "Options";
  std::vector<OptionSpec> options_;
};

}  // namespace parity::options
