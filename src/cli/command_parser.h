// The option table of each command, as one function: main_entry parses a command's arguments with
// it, and the man pages and bash completion (cli/manual.h) are generated from it, so the three
// cannot disagree.
#pragma once

#include "cli/command.h"

namespace parity::cli {

/// The parser for `command`: -h/--help, the command's own options (runner groups included),
/// --extension and the logging options, in the order --help lists them.
options::ArgParser make_command_parser(Command& command);

}  // namespace parity::cli
