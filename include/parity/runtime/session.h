// Session: parity's own ONNX executor ("ref"). Plans a model once (topological order, one kernel
// per node, attributes parsed, tensor lifetimes), then runs it many times.
//
// Threads (docs/concurrency.md), as ONNX Runtime's InferenceSession::Run:
// - run() and run_values() may be called on one Session from any number of threads at once, on a
//   Session made from an ONNX model or from a plan file alike. Each call has its own values, so
//   every run's results are bit-identical to the same run made alone, whatever the other threads
//   do; that holds for hooks, intermediate outputs and stop_after too (the unfused plan they need
//   is built once, by whichever run needs it first, while the others wait for it), for random
//   ops (each run draws from the session seed and its own call count), and for threads > 1.
// - The kernel threads belong to the Session, not to a run: its SessionOptions::threads - 1
//   workers are shared by concurrent runs (each calling thread computes too), as ORT's intra-op
//   pool is. For throughput, let N threads share a Session made with threads = 1; threads > 1
//   shortens one run.
// - A hook runs on the thread that called run(), so a hook shared by concurrent runs is called
//   from their threads at once; the RunOptions output pointers (profile, selected_profile,
//   peak_activation_bytes) must not be shared by concurrent runs. The inspectors (input_metadata,
//   intermediate_names, plan, options, ...) are const and safe beside runs.
// - Distinct Sessions may be created, run and destroyed on different threads at once, and may
//   share one TimingCache (TacticOptions::cache locks its own map).
// - Moving or destroying a Session is not concurrent with anything on that Session: it must
//   outlive every run that uses it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/metadata.h"
#include "core/status.h"
#include "core/tensor_map.h"
#include "runtime/kernel.h"
#include "runtime/kernel_options.h"
#include "runtime/profiles.h"
#include "runtime/reduced_precision.h"
#include "runtime/tactics.h"
#include "runtime/value.h"

#include "model/onnx_fwd.h"

namespace parity::runtime {

/// How the optimized tier computes a float16 or bfloat16 model.
enum class ReducedFloatCompute {
  /// On the float32 kernels (runtime/rewrites/reduced_float_lowering.h): weights converted once at
  /// plan time, values carried as float32 between layers and rounded only where the model casts to
  /// its narrow type; inputs and outputs keep the dtypes the model declares.
  kCarryFloat32,
  /// As the reference kernels (the oracle) compute: every layer in the model's type, its output
  /// rounded to it. Most layers then run on reference kernels.
  kStrict,
};

/// How a Session plans: threads, kernel tier, fusion, precision, profiles.
struct SessionOptions {
  /// Threads used by kernels (parallel_for); 1 runs everything on the calling thread.
  int threads = 1;
  /// kFloat64 is the fp64 oracle: floating initializers, constants and feeds are converted to
  /// double and every kernel computes in double. Cast to float16/float32 keeps double (no
  /// rounding to the narrow type), so the whole graph approximates exact arithmetic.
  Precision precision = Precision::kFloat32;
  /// In fp64 mode: convert floating outputs back to the dtype the model declares (true), or hand
  /// them out as float64 (false). Ignored in fp32 mode.
  bool outputs_in_model_dtype = true;
  /// Seed of the random ops (RandomNormal, Bernoulli, ...): equal seeds give equal runs.
  uint64_t seed = 0;
  /// Optimized kernels where they exist (default), or the reference kernels only. The fp64
  /// oracle always uses the reference kernels.
  KernelTier kernels = KernelTier::kOptimized;
  /// Fuse elementwise tails into the optimized kernel that produces their input. Runs with a hook
  /// or with intermediate outputs transparently use an unfused plan (built on first need), so
  /// every intermediate stays observable.
  bool fuse = true;
  /// Let optimized fp32 convolutions use Winograd's algorithm where it applies (3x3, stride 1,
  /// not grouped or dilated): about twice as fast, with round-off of the order of the direct
  /// sum's. false: every convolution sums directly.
  bool winograd = true;
  /// The optimized kernels' ISA cap and switches (runtime/kernel_options.h); recorded in plans.
  KernelOptions kernel_options;
  /// float16/bfloat16 models on the optimized tier (ignored by the reference tier, which is strict).
  ReducedFloatCompute reduced_floats = ReducedFloatCompute::kCarryFloat32;
  /// Layers built in fp16, bf16 or int8 (a reduced-precision plan: parity convert --fp16 ...).
  ReducedPrecisionConfig reduced_precision;
  /// Tactic choice: timing, replay, forbidden families (runtime/tactics.h).
  TacticOptions tactics;
  /// Optimization profiles (runtime/profiles.h): the input shapes the session serves. A dimension
  /// whose min and max differ becomes dynamic, tactics are timed at each profile's opt shapes
  /// (the sum over profiles decides), each profile's activation memory is measured at its max
  /// shapes, and a run outside every profile is refused. Empty: the model's declared shapes.
  std::vector<OptimizationProfile> profiles;
};

/// A named runtime value (tensor, sequence or optional) for feeds and results.
using NamedValues = std::vector<std::pair<std::string, Value>>;

/// Time one main-graph node took in a run (nested If/Loop/Scan bodies count toward their node).
struct NodeTiming {
  std::string label;    ///< "Conv node 'conv1' (fused with Relu node 'relu1')"
  std::string op_type;  ///< of the node itself, not of what it absorbed
  double seconds = 0;  ///< Wall time of the node in seconds.
};

/// Options of one Session::run: outputs to keep, hooks, where to stop.
struct RunOptions {
  /// Sees every value a main-graph node produces, as it is produced (name, value). Values are
  /// released after their last use unless requested as outputs, so a hook can compare layer by
  /// layer without keeping everything alive. In fp64 mode the values are float64.
  std::function<void(const std::string& name, const Value& value)> hook;
  /// Names to return instead of the graph outputs: graph outputs or any intermediate value of the
  /// main graph (Polygraphy's "mark all"). Empty: the graph outputs.
  std::vector<std::string> outputs;
  /// Check feeds against the declared input shapes (dtypes are always checked). The ONNX backend
  /// test runner does not check shapes, and some of its test data disagrees with the declared ones.
  bool check_input_shapes = true;
  /// When set, receives one entry per executed main-graph node, in execution order. Profiling
  /// does not change the plan (fused nodes show as one entry).
  std::vector<NodeTiming>* profile = nullptr;
  /// When set, the run ends right after the main-graph node that produces this value (and its
  /// hook call) and returns no values: a hook that only needs the values up to that point (a
  /// layer-by-layer comparison window) does not pay for the rest of the graph.
  std::string stop_after;
  /// With optimization profiles: the profile the run must fit (-1: the first that its input shapes
  /// fit). Ignored without profiles.
  int profile_index = -1;
  /// When set, receives the profile the run used (-1 without profiles).
  int* selected_profile = nullptr;
  /// When set, receives the peak bytes of main-graph values alive at once during the run.
  int64_t* peak_activation_bytes = nullptr;
};

/// A planned model that runs many times, from any number of threads (see the file comment).
class Session {
 public:
  /// Loads and plans a model file. Errors (unreadable file, unknown op with the versions that
  /// exist, malformed graph) come back as the Result's error.
  static Result<Session> create(const std::filesystem::path& model_path, const SessionOptions& options = {});
  /// Plans an in-memory model; base_dir resolves external data.
  static Result<Session> create(const onnx::ModelProto& model, const SessionOptions& options = {},
                                const std::filesystem::path& base_dir = {});

  /// A session over a plan that is already built (runtime/plan/plan_file.h loads one from a plan
  /// file): nothing is planned again. Such a session runs as built, so hooks and intermediate
  /// outputs (which need the unfused ONNX graph) are refused. `options` supplies the threads and
  /// seed; its precision and kernel settings must be the ones the plan was built with.
  static Session from_plan(std::shared_ptr<Subgraph> plan, const SessionOptions& options,
                           std::map<std::string, int> opsets = {});

  /// The optimized main-graph plan (fused, rewritten, one kernel per node), for saving it.
  const Subgraph& plan() const;
  /// The value types the planner gave kernels (declared and inferred); nullptr for a session made
  /// from a plan.
  const std::map<std::string, onnx::TypeProto>* value_types() const;
  /// The model's opsets by domain ("" = ai.onnx), as the planner resolved kernels.
  const std::map<std::string, int>& opsets() const;

  Session(Session&&) noexcept;  ///< Moves the session; not concurrent with anything on either session.
  Session& operator=(Session&&) noexcept;  ///< Moves the session; not concurrent with anything on either session.
  ~Session();  ///< Releases the plan; every run must have returned.

  /// Inputs the caller must feed (graph inputs without an initializer), with declared types.
  TensorMetadata input_metadata() const;
  /// Every graph input, including those with an initializer default (feeding them overrides it).
  std::vector<std::string> all_input_names() const;
  std::vector<std::string> output_names() const;  ///< Graph output names in order.
  TensorMetadata output_metadata() const;  ///< Graph outputs with declared (or inferred) types.
  /// Names of every value the main graph produces, in execution order (for "mark all").
  std::vector<std::string> intermediate_names() const;
  const SessionOptions& options() const;  ///< The options the session was planned with.

  /// Runs with tensor feeds and returns tensors; throws parity::Error (missing input, wrong
  /// dtype/shape, failure inside a node naming the node). Non-tensor outputs are an error here:
  /// use run_values.
  TensorMap run(const TensorMap& feed, const RunOptions& options = {}) const;
  /// General form: feeds and results may be sequences or optionals.
  NamedValues run_values(const NamedValues& feed, const RunOptions& options = {}) const;

 private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  /// The optimization profile the feed's shapes select (-1 without profiles); throws when none fits.
  int select_run_profile(const NamedValues& feed, int requested) const;
  /// Plans impl->model (set, with impl->env's base_dir and initializer values) under `options`.
  static Session plan_model(std::unique_ptr<Impl> impl, const SessionOptions& options);
  std::unique_ptr<Impl> impl_;
};

}  // namespace parity::runtime
