// The Comparator: runs several runners on identical inputs and compares their outputs
// (Polygraphy's Comparator.run / compare_accuracy / validate / postprocess).
//
// Threads (docs/concurrency.md): the Comparator keeps no state, so its functions may be called
// from several threads at once, each call with its own runners (a runner serves one thread at a
// time: a runner given to two concurrent run() calls makes one of them fail with the runner's
// one-line in-use error) and its own FeedSource, or one that is safe to share (a FeedList, or a
// DataLoader that knows the model's inputs already, compare/data_loader.h). compare_accuracy, validate and top_k only read what they are given. Isolation forks
// without exec, so run() with isolation must be the only thing the process is doing: a fork
// while other threads hold locks (malloc's, the logger's) leaves the child waiting for them.
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compare/compare_func.h"
#include "compare/data_loader.h"
#include "core/run_results.h"
#include "runners/runner.h"

namespace parity::compare {

/// Results of Comparator::compare_accuracy: for each compared runner pair, one IterationMatch
/// per iteration. True when every output of every iteration matched.
class AccuracyResult {
 public:
  /// The comparison of two runners' outputs.
  struct Pair {
    /// Name of the first runner (the one whose outputs are iterated).
    std::string runner0, runner1;
    /** \var Pair::runner1
        Name of the second runner. */
    std::vector<IterationMatch> iterations;  ///< One IterationMatch per compared iteration.
  };

  explicit operator bool() const;  ///< True when every output of every iteration of every pair matched.
  /// (passed, failed, total) iterations of a pair (the first pair by default).
  struct Stats {
    /// Iterations where every output matched.
    size_t passed = 0, failed = 0, total = 0;
    /** \var Stats::failed
        Iterations where some output did not. */
    /** \var Stats::total
        Iterations compared. */
  };
  Stats stats(size_t pair_index = 0) const;  ///< Iteration counts of pair `pair_index`.
  /// Fraction of iterations that passed, 1.0 when there is nothing to compare.
  double percentage(size_t pair_index = 0) const;

  std::vector<Pair>& pairs() { return pairs_; }  ///< The compared pairs, in comparison order.
  const std::vector<Pair>& pairs() const { return pairs_; }  ///< The compared pairs, in comparison order.

 private:
  std::vector<Pair> pairs_;
};

/// Called with the outputs of each inference as they are produced (before they are stored).
using OutputCallback = std::function<void(const std::string& runner_name, size_t iteration, const TensorMap& outputs)>;

/// Running each runner in a child process (`run --use-subprocess`): a runner that crashes, aborts,
/// hangs past timeout_s or exceeds memory_limit_bytes is recorded as a RunnerFailure, and the
/// other runners still run, are compared and saved.
struct Isolation {
  bool enabled = false;             ///< every runner in a child process
  /// Runners (by Runner::name()) in a child process even when `enabled` is false: the CLI puts the
  /// peers known to crash on some models here (RunnerInfo::isolate_by_default).
  std::vector<std::string> runners;
  double timeout_s = 0;            ///< 0: no limit
  uint64_t memory_limit_bytes = 0;  ///< address space of the child; 0: no limit

  /// Every runner in a child process, no limits.
  static Isolation every_runner() {
    Isolation isolation;
    isolation.enabled = true;
    return isolation;
  }

  bool applies_to(const std::string& runner_name) const {  ///< True when runner `runner_name` runs in a child process.
    return enabled || std::find(runners.begin(), runners.end(), runner_name) != runners.end();
  }
};

/// A runner that did not produce results under isolation, and why ("killed by signal 11 (Segmentation fault)").
struct RunnerFailure {
  std::string runner_name;  ///< Runner::name() of the runner.
  std::string reason;  ///< Why it failed, e.g. "killed by signal 11 (Segmentation fault)".
};

/// How Comparator::run feeds the runners: warm-up, isolation, what to keep.
struct RunOptions {
  /// Untimed inferences per runner on the first feed before the measured ones.
  int warm_up = 0;
  /// Receives the feeds used, in iteration order (e.g. to save them with --save-inputs).
  std::vector<TensorMap>* used_feeds = nullptr;
  /// Sees every inference's outputs as they are produced.
  OutputCallback on_outputs;
  /// Keep outputs in the returned RunResults (off when on_outputs consumes them, to save memory).
  bool store_outputs = true;
  /// Child processes per runner; failures go to `failures` (required when enabled).
  Isolation isolation;
  std::vector<RunnerFailure>* failures = nullptr;  ///< Receives the runners that failed under isolation (required when isolation applies to any).
  /// Feeds the source is expected to supply (0: unknown), for the progress line's ETA.
  size_t expected_iterations = 0;
};

/// Runs runners on the same inputs and compares their outputs (Polygraphy's Comparator).
class Comparator {
 public:
  /// Runs each runner (activating it for the duration) on every feed of `feeds`, in order.
  /// The first runner pulls feeds from the source (telling it its input metadata); the others
  /// reuse them, matched by name and cast when dtypes differ. Outputs are deep-copied.
  static RunResults run(const std::vector<runners::Runner*>& runners, FeedSource& feeds, const RunOptions& options = {});
  /// Same, with Polygraphy's default DataLoader (seed 1, one iteration).
  static RunResults run(const std::vector<runners::Runner*>& runners);

  /// Each runner compared with the next: (0, 1), (1, 2), ...
  static std::vector<std::pair<size_t, size_t>> default_comparisons(const RunResults& results);

  /// Compares the results of runner pairs iteration by iteration with `compare_func`
  /// (compare_funcs::simple() by default). Throws kInvalidArgument on a pair index out of range.
  static AccuracyResult compare_accuracy(const RunResults& results, const CompareFunc& compare_func = {},
                                         std::optional<std::vector<std::pair<size_t, size_t>>> comparisons = std::nullopt,
                                         bool fail_fast = false);

  /// Checks that each output of a compared pair's first run (indices into results.runs) has a
  /// counterpart in the second. Names that differ only trivially ("y" and "y:0", as
  /// TensorFlow-exported and ONNX runs name them) pair up as Polygraphy's comparator pairs them, with
  /// a warning naming the pairing; the second run's extra outputs are left uncompared with a warning;
  /// an output without a counterpart is kInvalidArgument naming both sets.
  static void check_output_sets(const RunResults& results, const std::vector<std::pair<size_t, size_t>>& comparisons);

  /// Checks outputs for NaN (and Inf when check_inf). Returns true when all are valid.
  static bool validate(const RunResults& results, bool check_inf = false, bool check_nan = true, bool fail_fast = false);

  /// Applies `fn` to every iteration result in place; returns the results.
  static RunResults& postprocess(RunResults& results, const std::function<void(IterationResult&)>& fn);
};

/// Polygraphy's PostprocessFunc.top_k: replaces outputs by the indices of their k largest values
/// along `axis` (stable, clamped to the axis length). Outputs without a setting (and no "" default)
/// are left alone.
struct TopK {
  int64_t k = 10;  ///< How many indices to keep.
  int64_t axis = -1;  ///< The axis (negative counts from the end).
};
/// The postprocess function (for Comparator::postprocess) applying `settings` per output.
std::function<void(IterationResult&)> top_k(PerOutput<std::optional<TopK>> settings);
/// Indices of the k largest values along axis (ties keep the lower index first), as int64.
Tensor top_k_indices(const Tensor& t, int64_t k, int64_t axis);

}  // namespace parity::compare
