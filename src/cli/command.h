// Subcommand registry. Each subcommand lives in src/cli/commands/<name>.cpp and registers itself
// there with PARITY_REGISTER_COMMAND; nothing central lists them.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "options/args.h"

namespace parity::cli {

/// Exit codes: 0 passed, 1 failed / user error, 2 internal error (a parity bug).
enum ExitCode : int { kExitPassed = 0, kExitFailed = 1, kExitInternal = 2 };

class Command {
 public:
  virtual ~Command() = default;
  /// Words that select the command: "run", or "inspect data" for a tool's subtool.
  virtual std::string name() const = 0;
  /// One line for `parity --help`.
  virtual std::string summary() const = 0;
  /// Defines the command's options (common logging options are added by the framework).
  virtual void add_options(options::ArgParser& parser) = 0;
  /// Runs the command. Returns kExitPassed or kExitFailed; throws parity::Error on user errors.
  virtual int run(const options::Args& args) = 0;
  /// Whether a passing run ends with the `PASSED | Runtime: ... | Command: ...` line. A command whose
  /// output is a report read as it is (Polygraphy's `inspect model` prints none) says no; a
  /// failure always ends with the FAILED line.
  virtual bool logs_passed_line() const { return true; }
};

using CommandFactory = std::function<std::unique_ptr<Command>()>;

class CommandRegistry {
 public:
  static CommandRegistry& instance();
  void add(CommandFactory factory);
  /// Instantiates every registered command (cheap: commands hold no state until run).
  std::vector<std::unique_ptr<Command>> create_all() const;

 private:
  std::vector<CommandFactory> factories_;
};

struct CommandRegistrar {
  explicit CommandRegistrar(CommandFactory factory) { CommandRegistry::instance().add(std::move(factory)); }
};

/// Entry point of the `parity` executable: dispatches argv to a command, prints the final
/// PASSED/FAILED line and maps errors to exit codes.
int main_entry(int argc, char** argv);
/// The command line main_entry is running ("parity run model.onnx --ref ..."), e.g. to quote it.
const std::string& current_command_line();

/// Adds -v/-q/--verbosity/--log-file/--silent/--no-color to a parser (every command gets these).
void add_logging_options(options::ArgParser& parser);
/// Applies the logging options to the global logger.
void apply_logging_options(const options::Args& args);

}  // namespace parity::cli

#define PARITY_CONCAT_INNER(a, b) a##b
#define PARITY_CONCAT(a, b) PARITY_CONCAT_INNER(a, b)
/// Registers a Command subclass with the CLI, from the file that defines it.
#define PARITY_REGISTER_COMMAND(CommandClass)                                              \
  static ::parity::cli::CommandRegistrar PARITY_CONCAT(parity_command_registrar_, __COUNTER__)( \
      [] { return std::unique_ptr<::parity::cli::Command>(new CommandClass()); })
