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
  kFlag,       // no value; present or not
  kCount,      // no value; counts occurrences (-v -v)
  kOne,        // exactly one value; last occurrence wins
  kOneOrMore,  // nargs='+': values until the next option; repeated occurrences append
  kAny,        // nargs='*'
  kRemainder,  // argparse.REMAINDER: every token after the flag, options included (a command line)
};

/// One command-line option: its flags, help, value name and arity.
struct OptionSpec {
  std::vector<std::string> flags;  // e.g. {"-o", "--output"}; empty means positional
  std::string dest;                // key in Args; defaults to the long flag without dashes
  std::string help;
  std::string metavar;
  Arity arity = Arity::kOne;
  std::vector<std::string> choices;  // allowed values, if non-empty
  std::optional<std::string> default_value;
  bool required = false;
  std::string group;  // title of the help section
};

/// The dest an option without one gets: its longest flag without dashes, '-' as '_'.
std::string default_dest(const OptionSpec& spec);

/// Parsed values, keyed by dest.
class Args {
 public:
  bool has(const std::string& dest) const;
  bool flag(const std::string& dest) const { return has(dest); }
  int count(const std::string& dest) const;
  /// Single value (last occurrence) or default; nullopt when absent without default.
  std::optional<std::string> get(const std::string& dest) const;
  std::string get_or(const std::string& dest, const std::string& fallback) const;
  /// All values given to a list option, across occurrences.
  std::vector<std::string> list(const std::string& dest) const;
  std::optional<double> get_double(const std::string& dest) const;
  std::optional<int64_t> get_int(const std::string& dest) const;
  /// The options in the order the user gave them (dest names), e.g. runner flags order.
  const std::vector<std::string>& order() const { return order_; }
  /// Every option occurrence (dest names), repeats included, in command-line order:
  /// `--ref --ort --ref` gives ref, ort, ref where order() gives ref, ort.
  const std::vector<std::string>& occurrences() const { return occurrences_; }

  /// Whether the parser that made these Args defines `dest` (typed groups check theirs).
  bool declares(const std::string& dest) const { return declared_.count(dest) > 0; }

  // Used by the parser.
  void declare(const std::string& dest) { declared_.insert(dest); }
  void add_value(const std::string& dest, std::string value);
  void add_presence(const std::string& dest);
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
  ArgParser(std::string prog, std::string description);

  /// Adds an option; returns *this so definitions chain.
  ArgParser& add(OptionSpec spec);
  /// Sets the help-section title used by subsequent add() calls without an explicit group.
  ArgParser& group(std::string title);
  /// Appends text shown after the options in --help (examples, notes).
  void set_epilog(std::string epilog) { epilog_ = std::move(epilog); }

  /// Parses args (without the program/command words). Throws Error(kInvalidArgument) on misuse.
  Args parse(const std::vector<std::string>& args) const;
  std::string help() const;
  const std::string& prog() const { return prog_; }
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
