// Runner registry: each runtime registers itself (name, CLI flag, option group, availability,
// factory) from its own folder; the CLI builds runners from it in the order the user gave flags.
//
// Threads (docs/concurrency.md): registrations are made during static initialization and by
// extension loading (runners/extension.h), which a process finishes before it starts threads that
// look runners up. From then on find(), all() and the RunnerInfo functions (availability, version,
// create) may be called from any number of threads at once; each create() call returns a runner of
// its own.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "options/any_group.h"
#include "core/status.h"
#include "runners/runner.h"

namespace parity::runners {

/// Every runner's own options, one value per runner options type (ort::OrtRunnerOptions,
/// RefRunnerOptions, ...): what a command parsed from the runners' option groups, or what an API
/// user set. A runner with no value stored uses its defaults.
using RunnerOptions = options::GroupValues;

/// What a runner factory gets: the model path and the runners' options (its own among them).
struct RunnerConfig {
  std::string model_path;  ///< The model file the runner runs.
  RunnerOptions options;   ///< The runners' options; empty (every default) when built from the C++ API.
};

/// A registered runtime: its name, flag, options, availability and factory.
struct RunnerInfo {
  std::string name;         ///< Its name: "ref", "ort", "opencv", "torch".
  std::string flag;         ///< The option that selects it: "--ref"
  /// More flags selecting the runner: Polygraphy's spellings (--onnxrt for --ort).
  std::vector<std::string> aliases;
  std::string description;  ///< One line for --help and --list-runners.
  /// The runner's option group (--ort-threads, ...), parsed into its own type in RunnerOptions;
  /// may be empty.
  options::AnyGroup options;
  /// OK when the runtime can be used now; otherwise the reason it is unavailable.
  std::function<Status(const RunnerOptions&)> availability;
  /// Version string of the underlying runtime ("1.30.0"), when available.
  std::function<std::string(const RunnerOptions&)> version;
  /// Builds a runner for a model; each call returns a runner of its own.
  std::function<std::unique_ptr<Runner>(const RunnerConfig&)> create;
  /// Optional extra line for `parity runners` (library path, execution providers, ...).
  std::function<std::string(const RunnerOptions&)> details;
  /// Sets the runner's thread count in `options` (bench times every runner at each of its
  /// --threads counts); empty for a runner without a thread setting.
  std::function<void(RunnerOptions& options, int threads)> set_threads;
  /// A runtime known to crash its process on some models: `run` puts it in a child process unless
  /// --no-subprocess is given, so its crash becomes a FAILED verdict instead of ending the comparison.
  bool isolate_by_default = false;
  /// False for a runner that runs only when named: "every runner" defaults (inspect capability)
  /// leave it out.
  bool selected_by_default = true;
  /// True for a runner that loads parity plans as well as ONNX models; `run X.plan` gives the
  /// others the ONNX model the plan was built from.
  bool reads_plans = false;
  /// Where --help, --list-runners and all() list it, lowest first (equal ones in registration
  /// order): the built-in runners' places are fixed so the listing does not follow static
  /// initialization order, which changes with the link order; extension runners come after them.
  int listing_order = 100;

  /// availability(options); OK for a runner that registered no check.
  Status available(const RunnerOptions& options = {}) const;
  /// Throws kUnavailable "runner 'name' (--flag) is unavailable: <reason>" unless available now.
  void require_available(const RunnerOptions& options = {}) const;
  /// This runner's options from command-line tokens ({"--ort-threads", "2"}); an option that is
  /// not the runner's, or a bad value, throws kInvalidArgument.
  RunnerOptions parse_options(const std::vector<std::string>& tokens) const;
};

/// A runtime parity does not have (TensorRT, TensorFlow) whose Polygraphy options users type out
/// of habit: each of its options is refused with one line naming the runtime it needs and the
/// parity option that does the closest job.
struct AbsentRuntimeInfo {
  std::string runtime;  ///< The runtime's name: "TensorRT"
  /// One of the absent runtime's options and parity's closest.
  struct Option {
    std::vector<std::string> flags;  ///< Its spellings: {"--trt-outputs"}
    std::string closest;             ///< parity's closest: "--onnx-outputs (parity's runners take ONNX models)"
  };
  std::vector<Option> runner_flags;  ///< What selects its runner (--trt).
  std::vector<Option> options;       ///< Its option groups (--workspace, --tf32, ...).

  /// "--trt needs TensorRT, which parity does not have; closest in parity: ..."
  std::string refusal(const std::string& flag, const Option& option) const;
};

/// The runtimes this parity has (built in and from extension modules).
class RunnerRegistry {
 public:
  /// The process's registry.
  static RunnerRegistry& instance();
  /// Registers a runner; a name registered twice is a parity bug (kInternal).
  void add(RunnerInfo info);
  /// The runner named `name`; null when none is.
  const RunnerInfo* find(const std::string& name) const;
  /// Every registered runner, by listing_order (then registration order).
  const std::vector<RunnerInfo>& all() const { return runners_; }
  /// The runner a flag (--ort, or an alias such as --onnxrt) selects; null when none does.
  const RunnerInfo* find_flag(const std::string& flag) const;

  /// Registers an absent runtime, whose options the CLI refuses.
  void add_absent(AbsentRuntimeInfo info) { absent_.push_back(std::move(info)); }
  /// Every registered absent runtime, in registration order.
  const std::vector<AbsentRuntimeInfo>& absent() const { return absent_; }

 private:
  std::vector<RunnerInfo> runners_;
  std::vector<AbsentRuntimeInfo> absent_;
};

/// A thread-count option's value, `minimum` (0 where 0 leaves the count to the runtime) to 1024;
/// anything else throws kInvalidArgument naming `flag`.
int parse_thread_count(const std::string& text, const std::string& flag, int minimum = 1);

/// A RunnerInfo::set_threads that stores the count in field `member` of the runner's options type.
template <class T>
std::function<void(RunnerOptions&, int)> set_threads_in(int T::*member) {
  return [member](RunnerOptions& options, int threads) {
    T own = options.get_or(T{});
    own.*member = threads;
    options.set(std::move(own));
  };
}

/// Every registered runner's options from command-line tokens as `parity run` takes them
/// ({"--ort-threads", "2", "--kernels", "reference"}): what a program generated by `run --gen-script`
/// hands to RunnerConfig. Unknown options and bad values throw kInvalidArgument.
RunnerOptions parse_runner_options(const std::vector<std::string>& tokens);

/// Registers a RunnerInfo at static-initialization time, where the runner is defined.
struct RunnerRegistrar {
  /// Adds `info` to RunnerRegistry::instance().
  explicit RunnerRegistrar(RunnerInfo info) { RunnerRegistry::instance().add(std::move(info)); }
};

/// Registers an AbsentRuntimeInfo at static-initialization time.
struct AbsentRuntimeRegistrar {
  /// Adds `info` to RunnerRegistry::instance().
  explicit AbsentRuntimeRegistrar(AbsentRuntimeInfo info) { RunnerRegistry::instance().add_absent(std::move(info)); }
};

}  // namespace parity::runners
