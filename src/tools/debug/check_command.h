// The external check of Polygraphy's debug tools (`--check CMD...`): runs a command and decides
// from its exit status and output whether it shows the failure being debugged.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace parity::tools::debug {

struct CheckCommand {
  /// argv; "{model}" / "{inputs}" anywhere in an argument are replaced (see substitute).
  std::vector<std::string> argv;
  /// Only these exit statuses are failures (Polygraphy's --fail-code); empty: any non-zero status.
  std::vector<int> fail_codes;
  /// Exit statuses that are not failures (--ignore-fail-code).
  std::vector<int> ignore_fail_codes;
  /// ECMAScript regular expressions (--fail-regex), as Polygraphy reads them: without fail_codes a
  /// run fails exactly when its output matches one (whatever its status); with fail_codes, when
  /// its status is listed and its output matches.
  std::vector<std::string> fail_regex;
};

struct CheckOutcome {
  bool failed = false;
  int exit_status = 0;  // the command's exit status; 128+N when killed by signal N
  std::string output;   // stdout and stderr, interleaved
};

/// Replaces every "{key}" in the arguments by its value.
std::vector<std::string> substitute(const std::vector<std::string>& argv, const std::map<std::string, std::string>& values);

/// Checks the options once before a long run: an empty command, an unknown program (not a path
/// and not on PATH) and a malformed --fail-regex each throw one kInvalidArgument/kNotFound line.
void validate_check_command(const CheckCommand& check);

/// Runs the command (argv already substituted) and classifies its outcome. A command that
/// cannot be started throws kNotFound naming it.
CheckOutcome run_check_command(const CheckCommand& check, const std::vector<std::string>& argv);

}  // namespace parity::tools::debug
