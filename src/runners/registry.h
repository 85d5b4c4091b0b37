// Runner registry: each runtime registers itself (name, CLI flag, option group, availability,
// factory) from its own folder; the CLI builds runners from it in the order the user gave flags.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "options/args.h"
#include "core/status.h"
#include "runners/runner.h"

namespace parity::runners {

/// What a runner factory gets: the model path and all parsed CLI options (its own group included).
struct RunnerConfig {
  std::string model_path;
  const options::Args* args = nullptr;  // may be null when built from the C++ API
};

struct RunnerInfo {
  std::string name;         // "ref", "ort", "opencv", "torch"
  std::string flag;         // "--ref"
  std::string description;  // one line for --help and --list-runners
  /// Adds the runner's option group (e.g. --ort-threads); may be empty.
  std::function<void(options::ArgParser&)> add_options;
  /// OK when the runtime can be used now; otherwise the reason it is unavailable.
  std::function<Status(const options::Args*)> availability;
  /// Version string of the underlying runtime ("1.30.0"), when available.
  std::function<std::string(const options::Args*)> version;
  std::function<std::unique_ptr<Runner>(const RunnerConfig&)> create;
  /// Optional extra line for `parity runners` (library path, execution providers, ...).
  std::function<std::string(const options::Args*)> details;
  /// A runtime known to crash its process on some models: `run` puts it in a child process unless
  /// --no-subprocess is given, so its crash becomes a FAILED verdict instead of ending the comparison.
  bool isolate_by_default = false;

  /// availability(args); OK for a runner that registered no check.
  Status available(const options::Args* args) const;
  /// Throws kUnavailable "runner 'name' (--flag) is unavailable: <reason>" unless available now.
  void require_available(const options::Args* args) const;
};

class RunnerRegistry {
 public:
  static RunnerRegistry& instance();
  void add(RunnerInfo info);
  const RunnerInfo* find(const std::string& name) const;
  const std::vector<RunnerInfo>& all() const { return runners_; }

 private:
  std::vector<RunnerInfo> runners_;
};

struct RunnerRegistrar {
  explicit RunnerRegistrar(RunnerInfo info) { RunnerRegistry::instance().add(std::move(info)); }
};

}  // namespace parity::runners
