// Runner selection as an option group: Polygraphy's one flag per runner (--ref --ort ...) for
// `run`, a comma-separated --runners list for `bench`, and every registered runtime's own options
// (--ort-threads, --kernels, ...). The flags come from the registry, so a new runner adds its flag
// and options to every command without editing one.
#pragma once

#include <string>
#include <vector>

#include "options/args.h"
#include "runners/registry.h"

namespace parity::runners {

class RunnerArgs {
 public:
  /// One counting flag per registered runner (--ref, --ort, ... and aliases such as --onnxrt), in
  /// help group `group`.
  void add_flags_to(options::ArgParser& parser, const std::string& group) const;
  /// The runners the flags select, in command-line order with repeats (--ref --ort --ref runs
  /// ref, ort, ref: each occurrence is its own runner instance, as in Polygraphy).
  std::vector<std::string> parse_flags(const options::Args& args) const;

  /// --runners NAMES (comma-separated) in the current help group.
  void add_list_to(options::ArgParser& parser, const std::string& help) const;
  /// The --runners option, for a typed group to bind.
  static options::OptionSpec list_spec(const std::string& help);
  /// The runners --runners values name; unknown names (listing the runners that exist), repeats
  /// and an empty list throw kInvalidArgument.
  static std::vector<std::string> runner_list(const std::vector<std::string>& values);
  /// The runners --runners names (`fallback` when absent); unknown names (listing the runners
  /// that exist), repeats and an empty list throw kInvalidArgument.
  std::vector<std::string> parse_list(const options::Args& args, const std::string& fallback) const;

  /// Each registered runtime's own options, except those whose flags the parser already defines
  /// (a command's own --threads replaces ref's).
  void add_runtime_options_to(options::ArgParser& parser) const;
  /// Every registered runtime's options as the command line gave them; `args` comes from a parser
  /// add_runtime_options_to() was applied to.
  RunnerOptions parse_runtime_options(const options::Args& args) const;
  /// The options of runtimes parity does not have (TensorRT's --workspace, TensorFlow's --xla, ...)
  /// that the parser does not define: each is refused with one line and its closest parity option.
  /// add_runtime_options_to() includes them; add_flags_to() refuses those runtimes' runner flags.
  void add_absent_options_to(options::ArgParser& parser) const;
};

}  // namespace parity::runners
