// The executor's plan of one graph (the main graph or an If/Loop/Scan body): nodes in topological
// order with their kernels, value slots, constants, outer-scope captures and release lists.
// Kernels treat Subgraph as opaque and run it through KernelContext::run_subgraph.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/metadata.h"
#include "runtime/kernel.h"
#include "runtime/kernel_options.h"
#include "runtime/reduced_precision.h"
#include "runtime/tactics.h"

#include "model/onnx_fwd.h"

namespace parity::runtime {

struct NodeTiming;

/// Implemented by the executor's KernelInit: the graph that holds the node, for ops that reason
/// about the graph itself (Gradient). Kernels reach it with dynamic_cast.
class GraphAccess {
 public:
  virtual ~GraphAccess() = default;
  virtual const onnx::GraphProto& graph_proto() const = 0;
};

/// Model-wide facts the planner needs for every graph it plans.
struct PlanEnv {
  std::map<std::string, int> opsets;  // domain ("" = ai.onnx) -> opset version
  Precision precision = Precision::kFloat32;
  std::filesystem::path base_dir;     // for external data
  /// Model-local functions, keyed by "domain::name"; inlined at plan time.
  std::map<std::string, const onnx::FunctionProto*> functions;
  /// Types of values known from the model (inputs, value_info, shape inference); used to build
  /// context-dependent function bodies. May be null.
  std::shared_ptr<const std::map<std::string, onnx::TypeProto>> value_types;
  /// Optimized kernels where registered (fp32 only; fp64-oracle plans always use the reference).
  KernelTier tier = KernelTier::kReference;
  /// Let fusable optimized kernels absorb the elementwise node that consumes their output. The
  /// absorbed node's input is then never produced, so hooks and "mark all" need an unfused plan.
  bool fuse = false;
  /// Let optimized convolutions use Winograd's algorithm where it applies (SessionOptions::winograd).
  bool winograd = true;
  /// The optimized kernels' ISA cap and switches (SessionOptions::kernel_options).
  KernelOptions kernel_options;
  /// Carry a float16/bfloat16 main graph in float32 on the optimized kernels
  /// (runtime/rewrites/reduced_float_lowering.h); false: every layer computes in the model's type.
  bool lower_reduced_floats = false;
  /// Reduced-precision layers (plans built with --fp16/--bf16/--int8); null: every layer fp32.
  std::shared_ptr<const ReducedPrecisionConfig> reduced;
  /// How tactics are chosen (timed, replayed, forbidden); null: the optimized variant where it
  /// accepts the node.
  std::shared_ptr<const TacticOptions> tactics;
  /// Value types with the inputs at each optimization profile's opt shapes: tactics are timed at
  /// these shapes (summed over profiles). Empty: at the declared static shapes.
  std::vector<std::shared_ptr<const std::map<std::string, onnx::TypeProto>>> timing_types;
  /// Main-graph initializers whose values were loaded beside the proto (model/mapped_load.h:
  /// their TensorProtos carry no data), by name; null: every initializer comes from its proto.
  std::shared_ptr<const std::unordered_map<std::string, Tensor>> initializer_values;
};

/// A node a fusable kernel absorbed (fuse_tails), kept so a saved plan can replay the fusion on
/// the rebuilt kernel (runtime/plan_file.h) instead of searching for it again.
struct FusedTail {
  NodeSpec spec;              // as offered: a commutative tail's inputs possibly swapped
  std::vector<int> inputs;    // slot per input of `spec`
  size_t position = 0;        // which input read the head's output
  size_t first_extra_input = 0;
};

struct PlannedNode {
  NodeSpec spec;
  std::string label;               // "Add node 'n'" for messages
  std::unique_ptr<Kernel> kernel;
  std::vector<int> inputs;         // slot per input, -1 when omitted
  std::vector<int> outputs;        // slot per output, -1 when omitted
  std::vector<int> release;        // slots whose last use is this node
  bool folded = false;             // outputs computed at plan time (Constant): not run again
  // How the kernel was made, for saving the plan (runtime/plan_file.h):
  std::string tactic;              // kernel variant: "optimized:conv_dnnl", "reference:conv"
  NodeSpec kernel_spec;            // the spec the kernel was built from (before tails were fused)
  std::vector<int> kernel_inputs;  // its input slots
  std::vector<FusedTail> tails;    // absorbed nodes, in fusion order
  bool writes_channels_last = false;
  std::vector<size_t> reads_channels_last;  // inputs read channels-last
  DType precision = DType::kFloat32;  // the layer's precision (runtime/reduced_precision.h)
  /// A Concat whose inputs were written into their slices of its output's shared buffer
  /// (runtime/rewrites/concat_placement.h): not run when they are in place.
  bool placed_concat = false;
};

/// Rethrows an error raised while planning or running `node` so that it names the node, in
/// Error::node() and in the message ("<label>: ..."), unless it was raised at the node itself
/// and names it already.
[[noreturn]] void rethrow_at_node(const PlannedNode& node, const Error& e);

/// A buffer several values are slices of (runtime/rewrites/concat_placement.h), allocated once
/// per run of the graph.
struct SharedBuffer {
  DType dtype = DType::kUndefined;
  Shape shape;
  int last_node = -1;  // index in nodes_ of the last node that writes or joins it
};

/// Where a placed value lives: the bytes from `byte_offset` of a shared buffer, as `shape`.
struct PlacedValue {
  int buffer = -1;
  size_t byte_offset = 0;
  Shape shape;
};

class Subgraph {
 public:
  const std::vector<std::string>& input_names() const { return input_names_; }
  const std::vector<std::string>& output_names() const { return output_names_; }
  size_t num_inputs() const { return input_names_.size(); }
  size_t num_outputs() const { return output_names_.size(); }
  /// Declared types of the graph's inputs/outputs (dtype kUndefined when not a tensor/unknown).
  const std::vector<TensorMeta>& input_meta() const { return input_meta_; }
  const std::vector<TensorMeta>& output_meta() const { return output_meta_; }

  // --- executor internals ---
  std::vector<std::string> slot_names_;
  std::unordered_map<std::string, int> slot_of_;
  std::vector<std::string> input_names_, output_names_;
  std::vector<TensorMeta> input_meta_, output_meta_;
  std::vector<int> input_slots_, output_slots_;
  std::vector<std::pair<int, Value>> constants_;    // initializers (slot, value)
  std::vector<bool> is_initializer_;                // per slot
  std::vector<std::pair<int, int>> captures_;       // (local slot, enclosing graph's slot)
  std::vector<PlannedNode> nodes_;
  std::vector<bool> keep_alive_;                    // per slot: graph outputs are never released
  std::unordered_map<int, Value> plan_time_values_; // Constant node outputs folded at plan time
  int fused_nodes_ = 0;                             // nodes absorbed into their producer
  int channels_last_values_ = 0;                    // values handed off channels-last (runtime/channels_last.h)
  std::vector<SharedBuffer> shared_buffers_;        // Concat placement (runtime/rewrites/concat_placement.h)
  std::unordered_map<int, PlacedValue> placed_values_;  // by slot
  /// float16/bfloat16 values carried as float32 (runtime/rewrites/reduced_float_lowering.h), and
  /// the value types the kernels were then built against (null: the session's).
  int reduced_float_values_ = 0;
  std::shared_ptr<const std::map<std::string, onnx::TypeProto>> kernel_value_types_;

  int slot(const std::string& name) const {
    auto it = slot_of_.find(name);
    return it == slot_of_.end() ? -1 : it->second;
  }
};

/// The name a saved plan records for a kernel registration: its tier and source file, e.g.
/// "optimized:conv_dnnl" (the variant, TensorRT's "tactic").
std::string tactic_name(const KernelDef& def);

/// Plans `graph`. `parent` is the enclosing graph's plan (nullptr for the main graph); names the
/// graph uses but does not define are captured from it.
std::shared_ptr<Subgraph> plan_graph(const onnx::GraphProto& graph, const PlanEnv& env, const Subgraph* parent);

/// Run-time state shared by all frames of one Session::run call.
struct RunState {
  ThreadPool* pool = nullptr;
  Precision precision = Precision::kFloat32;
  uint64_t seed = 0;
  uint64_t random_calls = 0;
  /// Called for every value a main-graph node produces (nullptr: no hook).
  const std::function<void(const std::string&, const Value&)>* hook = nullptr;
  /// Main-graph slots the caller asked for (kept alive until the end of the run).
  const std::vector<bool>* keep_slots = nullptr;
  /// Per-node timings of the main graph (nullptr: not profiling).
  std::vector<NodeTiming>* profile = nullptr;
  /// Main-graph slot after whose producer the run ends (-1: run every node).
  int stop_slot = -1;
  /// When set, raised to the peak bytes of main-graph node outputs alive at once.
  int64_t* peak_activation_bytes = nullptr;
};

/// Runs a planned graph. `inputs` are positional (graph inputs); `outer` is the frame of the
/// enclosing graph (for captures). Returns the values of all slots after the run (released slots
/// empty); callers read outputs through output_slots_.
std::vector<Value> execute_graph(const Subgraph& graph, std::vector<Value> inputs, const std::vector<Value>* outer,
                                 RunState& state, bool is_main);

}  // namespace parity::runtime
