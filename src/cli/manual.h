// Man pages and bash completion, generated from the parsers the commands really parse with
// (cli/command_parser.h), so that they list exactly the options parity accepts:
//   parity help [COMMAND...]                            a command's --help
//   parity help --format man --output DIR               parity.1 and one parity-<command>.1 each
//   parity help --format bash-completion [--output F]   a bash completion script for `parity`
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"

namespace parity::cli {

/// One command as the manual shows it.
struct CommandManual {
  std::string name;  // "run", "inspect model"
  std::string summary;
  options::ArgParser parser;
};

/// The options `parity` itself reads before the command word (main_entry parses them by hand).
const std::vector<options::OptionSpec>& top_level_options();

/// `parity --help`: usage, the commands with their summaries, how to get more.
std::string top_level_help(const std::vector<std::unique_ptr<Command>>& commands);

/// The manual of every command, sorted by name.
std::vector<CommandManual> command_manuals(const std::vector<std::unique_ptr<Command>>& commands);

/// "parity-inspect-model.1" for "inspect model".
std::string man_page_file_name(const std::string& command_name);

/// The man page (roff, man macros) of one command: NAME, SYNOPSIS, DESCRIPTION, OPTIONS by group,
/// the command's notes and examples, SEE ALSO.
std::string command_man_page(const CommandManual& manual);

/// parity(1): the commands, each with its page, and the top-level options.
std::string overview_man_page(const std::vector<CommandManual>& manuals);

/// A bash completion script for `parity`: command words, each command's options, the choices of
/// options that have them, file names elsewhere.
std::string bash_completion_script(const std::vector<CommandManual>& manuals);

/// `parity help ...` (see above). Returns the exit code; throws Error on bad arguments.
int run_help(const std::vector<std::string>& args, const std::vector<std::unique_ptr<Command>>& commands);

}  // namespace parity::cli
