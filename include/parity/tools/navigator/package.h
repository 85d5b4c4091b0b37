// .nav packages and the C++ API over a navigator workspace, mirroring Model Navigator's
// PackageDescriptor: query the formats' status and performance, get a model or a runner, record
// the user's verification, save to a .nav (a zip of the workspace), load one (refusing entries
// that would land outside the target folder) and re-test or profile it on this machine, and pick
// the best format x runtime by a strategy.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "compare/comparator.h"
#include "runners/runner.h"
#include "tools/navigator/status.h"

namespace parity::tools::navigator {

/// How to pick the best format x runtime among those whose conversion and correctness passed.
enum class Strategy {
  kMinLatency,                  ///< lowest p50 at batch size 1
  kMaxThroughput,               ///< highest throughput at any batch size
  kMaxThroughputWithinLatency,  ///< highest throughput among batch sizes whose p50 fits the budget
  kMinLatencyAndMaxThroughput,  ///< the one that is both, or none
};

/// A format and runtime picked by a strategy.
struct RuntimeChoice {
  std::string format;  ///< Format name, e.g. "onnx-fp16".
  std::string runtime;  ///< Runner name, e.g. "ref".
  double p50_ms = 0;       ///< at batch size 1
  double throughput = 0;   ///< the best the strategy considered
  int64_t batch_size = 1;  ///< where that throughput was measured
};

/// How a package is saved.
struct SaveOptions {
  bool keep_data = true;   ///< false (--no-data): leave model_input/ and model_output/ out
  bool override = false;   ///< replace an existing file
};

/// How a package is loaded.
struct LoadOptions {
  bool retest = true;               ///< conversion and correctness again, from the stored samples
  bool retest_conversions = false;  ///< export the derived formats again first
  bool run_profiling = false;       ///< performance again
  bool quiet = true;  ///< Log to navigator.log only, not also to stderr.
  compare::Isolation isolation = compare::Isolation::every_runner();  ///< How the cells' runners are isolated in subprocesses.
};

/// Profiling overrides for profile(); unset fields keep the package's configuration.
struct ProfileOptions {
  std::optional<std::string> measurement_mode;  ///< "time_windows" or "count_windows".
  /// Length of a time window in milliseconds.
  std::optional<int64_t> window_ms, window_count, max_batch_size;
  /** \var ProfileOptions::window_count
      Inferences per count window. */
  /** \var ProfileOptions::max_batch_size
      Largest batch size profiled. */
  /// Windows agree when within this percentage of each other.
  std::optional<double> stability_percentage, throughput_cutoff;
  /** \var ProfileOptions::throughput_cutoff
      A batch size adding less than this relative throughput saturates. */
  std::optional<int> max_trials;  ///< Most windows run per batch size.
  bool quiet = true;  ///< Log to navigator.log only, not also to stderr.
  compare::Isolation isolation = compare::Isolation::every_runner();  ///< How the cells' runners are isolated in subprocesses.
};

/// Threads and processes: the methods that write the workspace (load, set_verified, profile,
/// retest) hold its WorkspaceLock exclusively and save holds it shared (workspace_lock.h), so a
/// second process writing the same workspace is refused with one line instead of interleaving;
/// one PackageDescriptor object is used by one thread at a time.
class PackageDescriptor {
 public:
  /// Opens a workspace folder (status.yaml is read now).
  explicit PackageDescriptor(std::filesystem::path workspace);

  /// Unpacks `package` into `target` (which must not exist or be empty) and re-tests it there.
  static PackageDescriptor load(const std::filesystem::path& package, const std::filesystem::path& target,
                                const LoadOptions& options = {});

  const std::filesystem::path& workspace() const { return workspace_; }  ///< The workspace folder.
  const WorkspaceStatus& status() const { return status_; }  ///< The workspace's status.yaml as last read or written.

  /// Format -> true when it was produced and passed on at least one runtime.
  std::map<std::string, bool> get_formats_status() const;
  /// Format -> its lowest p50 latency at batch size 1 in ms over the runtimes that passed.
  std::map<std::string, double> get_formats_performance() const;
  /// Whether the format (on `runtime`, or on any runtime) passed its conversion and correctness tests.
  bool get_status(const std::string& format, const std::optional<std::string>& runtime = std::nullopt) const;
  /// The format's model file. Throws kNotFound when the format was not produced.
  std::filesystem::path get_model(const std::string& format) const;
  /// An inactive runner of `runtime` over the format's model.
  std::unique_ptr<runners::Runner> get_runner(const std::string& format, const std::string& runtime) const;
  /// Records the user's verdict and writes status.yaml.
  void set_verified(const std::string& format, const std::string& runtime, bool verified = true);
  /// Writes the .nav package.
  void save(const std::filesystem::path& package, const SaveOptions& options = {}) const;
  /// Runs the performance step again on every cell that passed.
  void profile(const ProfileOptions& options = {});
  /// Conversion and correctness again (after `export` of the derived formats when reexport).
  void retest(bool reexport, bool run_profiling, bool quiet, const compare::Isolation& isolation);

  /// The best cell by `strategy`; nullopt when nothing passed or nothing fits.
  std::optional<RuntimeChoice> best_runtime(Strategy strategy, std::optional<double> latency_budget_ms = std::nullopt,
                                            bool verified_only = false) const;
  /// Whether any format x runtime passed its conversion and correctness tests.
  bool any_passed() const;

 private:
  std::filesystem::path workspace_;
  WorkspaceStatus status_;
};

/// Unpacks a .nav (zip) into `target`. Every entry is checked before anything is written: an
/// absolute name, a `..` component, a symlink or a duplicate is refused with one line naming it.
void unpack_package(const std::filesystem::path& package, const std::filesystem::path& target);

/// The best cell of a status by `strategy` among those that passed (and were verified, when
/// verified_only), whose performance was measured, and whose format `allowed` accepts.
std::optional<RuntimeChoice> choose_runtime(const WorkspaceStatus& status, Strategy strategy,
                                            std::optional<double> latency_budget_ms = std::nullopt,
                                            bool verified_only = false,
                                            const std::function<bool(const std::string& format)>& allowed = {});

/// "min-latency", "max-throughput", "max-throughput-within-latency", "min-latency-and-max-throughput".
Strategy strategy_from_name(const std::string& name);

}  // namespace parity::tools::navigator
