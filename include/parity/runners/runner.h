// Runner: executes a model on one runtime. Public activate/infer/deactivate validate state and
// inputs, then call the *_impl hooks each runtime implements (Polygraphy's BaseRunner).
//
// Threads (docs/concurrency.md): a runner is used by one thread at a time; distinct runners,
// of the same runtime or not, may be activated, run and deactivated on different threads at
// once. A call to activate, deactivate, input_metadata or infer while another thread is inside
// one of them on the same runner throws a one-line kInvalidArgument error saying so, instead of
// racing; threads that take turns (one call after the other ends) need no lock of their own.
// name, is_active and last_inference_time may be read from any thread at any time. To run one
// model from many threads at once, share a runtime::Session (RefRunner::session()) instead.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "core/metadata.h"
#include "core/tensor_map.h"

namespace parity::runners {

/// One runtime running one model (Polygraphy's BaseRunner): activate, infer, deactivate.
class Runner {
 public:
  /// A runner named `name` (used as given; see make_runner_name()).
  explicit Runner(std::string name);
  virtual ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  /// Unique name, e.g. "ref-runner-N0-01/02/26-10:00:00" (Polygraphy's naming).
  const std::string& name() const { return name_; }
  bool is_active() const { return active_.load(std::memory_order_acquire); }  ///< True between activate() and deactivate(); readable from any thread.

  /// Loads the model and prepares the runtime. Expensive: do it once. Throws if already active.
  void activate();
  /// Releases the runtime. Throws if not active.
  void deactivate();

  /// Input names, dtypes and shapes (dynamic dims as -1/symbols). Requires an active runner.
  TensorMetadata input_metadata();
  /// Runs one inference. Checks feed names/dtypes/shapes against input_metadata() first
  /// (unless check_inputs is false) and throws a one-line kInvalidArgument naming the problem.
  ///
  /// The returned tensors may share buffers the runner reuses on the next call: clone() them
  /// (TensorMap::clone) to keep outputs of several inferences.
  TensorMap infer(const TensorMap& feed, bool check_inputs = true);
  /// Wall time of the last infer_impl call, in seconds.
  double last_inference_time() const { return last_inference_time_.load(std::memory_order_relaxed); }

 protected:
  virtual void activate_impl() = 0;  ///< Loads the model; called by activate().
  virtual void deactivate_impl() {}  ///< Releases what activate_impl() acquired; called by deactivate(). Does nothing by default.
  virtual TensorMetadata input_metadata_impl() = 0;  ///< The model's inputs; called (and cached) by input_metadata().
  virtual TensorMap infer_impl(const TensorMap& feed) = 0;  ///< Runs one inference on a feed infer() has already checked.

 private:
  class InUse;
  TensorMetadata cached_input_metadata();
  void check_feed(const TensorMap& feed);
  std::string name_;
  std::atomic<bool> active_{false};
  std::atomic<double> last_inference_time_{0.0};
  /// Set while a thread is inside activate/deactivate/input_metadata/infer: a second thread
  /// entering one of them is told, and the plain members below are only touched by its holder.
  std::atomic<bool> in_use_{false};
  std::unique_ptr<TensorMetadata> cached_metadata_;
};

/// Activates a runner for the lifetime of the guard (Python's `with runner:`).
class ActiveRunner {
 public:
  explicit ActiveRunner(Runner& runner) : runner_(runner) { runner_.activate(); }  ///< Activates `runner` (which must outlive the guard); deactivates it on destruction, ignoring errors.
  ~ActiveRunner() {
    if (runner_.is_active()) {
      try {
        runner_.deactivate();
      } catch (...) {
      }
    }
  }
  ActiveRunner(const ActiveRunner&) = delete;
  ActiveRunner& operator=(const ActiveRunner&) = delete;
  Runner* operator->() { return &runner_; }  ///< The guarded runner.
  Runner& get() { return runner_; }  ///< The guarded runner.

 private:
  Runner& runner_;
};

/// Polygraphy-style default runner name: "<prefix>-runner-N<counter>-<date>-<time>".
std::string make_runner_name(const std::string& prefix);

}  // namespace parity::runners
