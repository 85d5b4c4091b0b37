// Plans a GraphProto into a Subgraph: function inlining, topological order, kernel selection,
// attribute parsing, outer-scope captures and tensor lifetimes.
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>

#include "core/logger.h"
#include "core/topological_order.h"
#include "model/proto_convert.h"
#include "runtime/channels_last.h"
#include "runtime/kernel_preferences.h"
#include "runtime/positional_fusion.h"
#include "runtime/rewrites/activation_rewrite.h"
#include "runtime/rewrites/batch_norm_folding.h"
#include "runtime/rewrites/channel_shuffle_rewrite.h"
#include "runtime/rewrites/concat_placement.h"
#include "runtime/rewrites/qdq_fusion.h"
#include "runtime/rewrites/reduced_float_lowering.h"
#include "runtime/subgraph.h"

namespace parity::runtime {

namespace {

std::string normalize_domain(const std::string& domain) { return domain == "ai.onnx" ? std::string() : domain; }
std::string display_domain(const std::string& domain) { return domain.empty() ? std::string("ai.onnx") : domain; }

/// A tensor type's shape when every dimension is a known number.
std::optional<Shape> static_shape_of(const onnx::TypeProto& type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return std::nullopt;
  Shape shape;
  for (const auto& d : type.tensor_type().shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) return std::nullopt;
    shape.push_back(d.dim_value());
  }
  return shape;
}

// The ONNX release whose operator sets parity implements, and the newest opset of each of its
// domains (custom domains have none: their versions are whatever their kernels register).
constexpr const char* kNewestKnownOnnxRelease = "1.23";
std::optional<int> newest_known_opset(const std::string& domain) {
  if (domain.empty() || domain == "ai.onnx") return 28;
  if (domain == "ai.onnx.ml") return 5;
  if (domain == "ai.onnx.preview" || domain == "ai.onnx.preview.training") return 1;
  return std::nullopt;
}

/// Names a graph uses but does not define (recursively through nested graphs): its outer-scope
/// references.
std::set<std::string> free_names(const onnx::GraphProto& graph);

void add_node_uses(const onnx::NodeProto& node, std::set<std::string>& used) {
  for (const auto& in : node.input())
    if (!in.empty()) used.insert(in);
  for (const auto& attr : node.attribute()) {
    if (attr.has_g())
      for (const auto& n : free_names(attr.g())) used.insert(n);
    for (const auto& g : attr.graphs())
      for (const auto& n : free_names(g)) used.insert(n);
  }
}

std::set<std::string> free_names(const onnx::GraphProto& graph) {
  std::set<std::string> defined, used;
  for (const auto& v : graph.input()) defined.insert(v.name());
  for (const auto& t : graph.initializer()) defined.insert(t.name());
  for (const auto& t : graph.sparse_initializer()) defined.insert(t.values().name());
  for (const auto& node : graph.node()) {
    for (const auto& out : node.output()) defined.insert(out);
    add_node_uses(node, used);
  }
  for (const auto& out : graph.output()) used.insert(out.name());
  std::set<std::string> result;
  for (const auto& n : used)
    if (!defined.count(n)) result.insert(n);
  return result;
}

/// A node after function inlining, with the opsets its op is resolved against.
struct ExpandedNode {
  onnx::NodeProto proto;
  std::shared_ptr<const std::map<std::string, int>> opsets;  // null: the model's
};

std::shared_ptr<const std::map<std::string, int>> function_opsets(const onnx::FunctionProto& fn,
                                                                 const std::map<std::string, int>& outer) {
  auto opsets = std::make_shared<std::map<std::string, int>>(outer);
  for (const auto& o : fn.opset_import()) (*opsets)[normalize_domain(o.domain())] = static_cast<int>(o.version());
  return opsets;
}

class Expander {
 public:
  explicit Expander(const PlanEnv& env) : env_(env) {}
  std::map<std::string, onnx::TypeProto> no_types_;

  void expand(const onnx::NodeProto& node, std::shared_ptr<const std::map<std::string, int>> opsets,
              std::vector<ExpandedNode>& out, int depth) {
    const std::string domain = normalize_domain(node.domain());
    const auto& ops = opsets ? *opsets : env_.opsets;
    auto it = ops.find(domain);
    const int opset = it == ops.end() ? 0 : it->second;
    if (KernelRegistry::instance().resolve(domain, node.op_type(), opset) || depth > 16) {
      out.push_back({node, opsets});
      return;
    }
    // Model-local function.
    auto fn_it = env_.functions.find(domain + "::" + node.op_type());
    if (fn_it != env_.functions.end()) {
      inline_function(node, *fn_it->second, function_opsets(*fn_it->second, ops), out, depth);
      return;
    }
    // Operator defined by a function in its ONNX schema (no dedicated kernel yet).
    const onnx::OpSchema* schema =
        opset > 0 ? onnx::OpSchemaRegistry::Schema(node.op_type(), opset, display_domain(domain)) : nullptr;
    if (schema) {
      onnx::FunctionProto body;
      bool have_body = false;
      if (schema->HasFunction()) {
        body = *schema->GetFunction();
        have_body = true;
      } else if (schema->HasContextDependentFunction()) {
        std::vector<onnx::TypeProto> types;
        for (const auto& in : node.input()) {
          const auto& known = env_.value_types ? *env_.value_types : no_types_;
          auto t = known.find(in);
          types.push_back(t == known.end() ? onnx::TypeProto() : t->second);
        }
        try {
          onnx::FunctionBodyBuildContextImpl ctx(node, types);
          have_body = schema->BuildContextDependentFunction(ctx, body);
        } catch (const std::exception&) {
          have_body = false;
        }
      }
      if (have_body && body.node_size() > 0) {
        auto body_opsets = std::make_shared<std::map<std::string, int>>(ops);
        (*body_opsets)[domain] = schema->since_version();
        for (const auto& o : body.opset_import())
          (*body_opsets)[normalize_domain(o.domain())] = static_cast<int>(o.version());
        inline_function(node, body, body_opsets, out, depth);
        return;
      }
    }
    out.push_back({node, opsets});  // planning reports the missing kernel
  }

 private:
  void inline_function(const onnx::NodeProto& call, const onnx::FunctionProto& fn,
                       std::shared_ptr<const std::map<std::string, int>> opsets, std::vector<ExpandedNode>& out,
                       int depth) {
    const std::string prefix = "__" + call.op_type() + "_" + std::to_string(counter_++) + "__";
    std::map<std::string, std::string> rename;
    for (int i = 0; i < fn.input_size(); ++i) rename[fn.input(i)] = i < call.input_size() ? call.input(i) : "";
    for (int i = 0; i < fn.output_size(); ++i) rename[fn.output(i)] = i < call.output_size() ? call.output(i) : "";
    auto mapped = [&](const std::string& name) -> std::string {
      if (name.empty()) return name;
      auto it = rename.find(name);
      return it != rename.end() ? it->second : prefix + name;
    };
    std::map<std::string, const onnx::AttributeProto*> call_attrs;
    for (const auto& a : call.attribute()) call_attrs[a.name()] = &a;
    for (const auto& body_node : fn.node()) {
      onnx::NodeProto node = body_node;
      node.clear_input();
      node.clear_output();
      for (const auto& in : body_node.input()) node.add_input(mapped(in));
      for (const auto& o : body_node.output()) node.add_output(mapped(o));
      node.clear_attribute();
      for (const auto& a : body_node.attribute()) {
        if (a.ref_attr_name().empty()) {
          *node.add_attribute() = a;
          continue;
        }
        auto ref = call_attrs.find(a.ref_attr_name());
        if (ref == call_attrs.end()) continue;  // the body op's own default applies
        onnx::AttributeProto copy = *ref->second;
        copy.set_name(a.name());
        *node.add_attribute() = copy;
      }
      if (node.name().empty()) node.set_name(prefix + body_node.op_type());
      else node.set_name(prefix + node.name());
      expand(node, opsets, out, depth + 1);
    }
  }

  const PlanEnv& env_;
  int counter_ = 0;
};

/// Plan-time view given to kernel factories.
class PlanKernelInit : public KernelInit, public GraphAccess, public KernelPreferences {
 public:
  PlanKernelInit(const NodeSpec& spec, const PlanEnv& env, const Subgraph& plan, const std::vector<int>& input_slots,
                 const onnx::GraphProto& graph)
      : KernelInit(spec, env.precision), env_(env), plan_(plan), input_slots_(input_slots), graph_(graph) {}

  const onnx::GraphProto& graph_proto() const override { return graph_; }
  bool winograd_allowed() const override { return env_.winograd; }  // KernelPreferences
  const KernelOptions& kernel_options() const override { return env_.kernel_options; }

  std::optional<Tensor> constant_input(size_t i) const override {
    if (i >= input_slots_.size() || input_slots_[i] < 0) return std::nullopt;
    const int slot = input_slots_[i];
    // Main-graph inputs that also have an initializer may be overridden by the feed.
    if (std::find(plan_.input_slots_.begin(), plan_.input_slots_.end(), slot) != plan_.input_slots_.end())
      return std::nullopt;
    for (const auto& [s, v] : plan_.constants_)
      if (s == slot && v.is_tensor()) return v.tensor();
    auto it = plan_.plan_time_values_.find(slot);
    if (it != plan_.plan_time_values_.end() && it->second.is_tensor()) return it->second.tensor();
    return std::nullopt;
  }

  DType input_dtype(size_t i) const override {
    const onnx::TypeProto* type = input_type(i);
    if (!type || !type->has_tensor_type()) return DType::kUndefined;
    return static_cast<DType>(type->tensor_type().elem_type());
  }

  std::optional<Shape> input_static_shape(size_t i) const override {
    const onnx::TypeProto* type = input_type(i);
    return type ? static_shape_of(*type) : std::nullopt;
  }

  std::shared_ptr<Subgraph> subgraph(const std::string& attr_name) const override {
    const model::Attribute* attr = find_attr(attr_name);
    if (!attr || attr->type != model::AttrType::kGraph || !attr->g) fail("graph attribute '", attr_name, "' is missing");
    return plan_graph(*attr->g, env_, &plan_);
  }

 private:
  const PlanEnv& env_;
  const Subgraph& plan_;
  const std::vector<int>& input_slots_;
  const onnx::GraphProto& graph_;

  const onnx::TypeProto* input_type(size_t i) const {
    if (!env_.value_types || !has_input(i)) return nullptr;
    auto it = env_.value_types->find(spec().inputs[i]);
    return it == env_.value_types->end() ? nullptr : &it->second;
  }
};

std::string join_ints(const std::vector<int>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

/// Evaluates a Constant-like node (no inputs) at plan time so later kernels can see its value.
class FoldContext : public KernelContext {
 public:
  FoldContext(const PlannedNode& node, Precision precision) : node_(node), precision_(precision) {
    outputs_.resize(node.outputs.size());
  }
  size_t num_inputs() const override { return 0; }
  size_t num_outputs() const override { return outputs_.size(); }
  bool has_input(size_t) const override { return false; }
  const Value& input_value(size_t) const override { fail("no inputs"); }
  bool has_output(size_t i) const override { return i < outputs_.size(); }
  void set_output(size_t i, Value v) override { outputs_.at(i) = std::move(v); }
  Value& output_value(size_t i) override { return outputs_.at(i); }
  std::vector<Value> run_subgraph(const Subgraph&, std::vector<Value>) override { fail("no subgraphs"); }
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) override { fn(0, n); }
  int num_threads() const override { return 1; }
  Precision precision() const override { return precision_; }
  uint64_t next_random_seed() override { return 0; }
  std::string node_label() const override { return node_.label; }
  std::string node_error_name() const override { return runtime::node_error_name(node_.spec); }
  std::vector<Value> outputs_;

 private:
  const PlannedNode& node_;
  Precision precision_;
};

/// Offers each fusable kernel the node that alone consumes its only output, repeatedly (Conv,
/// then Add, then Relu). A tail is absorbed only if everything else it reads is available where
/// the head runs; its extra inputs are appended to the head's inputs. Absorbed nodes are removed
/// from `g.nodes_` and `uses`.
void fuse_tails(Subgraph& g, std::vector<std::vector<int>>& uses, const PlanEnv& env, const onnx::GraphProto& graph) {
  const size_t num_nodes = g.nodes_.size();
  std::vector<int> position_of_producer(g.slot_names_.size(), -1);
  for (size_t i = 0; i < num_nodes; ++i)
    for (int s : g.nodes_[i].outputs)
      if (s >= 0) position_of_producer[s] = static_cast<int>(i);
  std::vector<std::vector<int>> consumers(g.slot_names_.size());
  for (size_t i = 0; i < num_nodes; ++i)
    for (int s : uses[i]) consumers[s].push_back(static_cast<int>(i));
  std::vector<bool> is_graph_output(g.slot_names_.size(), false);
  for (int s : g.output_slots_) is_graph_output[s] = true;

  std::vector<bool> absorbed(num_nodes, false);
  for (size_t i = 0; i < num_nodes; ++i) {
    if (absorbed[i]) continue;
    PlannedNode& head = g.nodes_[i];
    auto* fusable = dynamic_cast<FusableKernel*>(head.kernel.get());
    if (!fusable) continue;
    while (true) {
      int out_index = -1, live_outputs = 0;
      for (size_t k = 0; k < head.outputs.size(); ++k)
        if (head.outputs[k] >= 0) {
          out_index = static_cast<int>(k);
          ++live_outputs;
        }
      if (live_outputs != 1) break;
      const int slot = head.outputs[out_index];
      if (is_graph_output[slot] || consumers[slot].size() != 1) break;
      const int j = consumers[slot][0];
      PlannedNode& tail = g.nodes_[j];
      if (absorbed[j] || j <= static_cast<int>(i) || tail.inputs.empty()) break;
      // A fused tail computes in the head's precision, before its output rounding; an int8 head
      // hands out fp32, so fp32 tails fuse into it unchanged.
      if (tail.precision != head.precision && !(head.precision == DType::kInt8 && tail.precision == DType::kFloat32))
        break;
      if (std::count(tail.inputs.begin(), tail.inputs.end(), slot) != 1) break;
      // A commutative binary tail that reads the head's output second (torch exports nn.Linear
      // as Add(bias, MatMul(...))) is offered with its operands swapped: the fused value is
      // always the tail's input 0.
      NodeSpec tail_spec = tail.spec;
      std::vector<int> tail_inputs = tail.inputs;
      if (tail_inputs[0] != slot && tail_inputs.size() == 2 && tail_inputs[1] == slot && tail_spec.domain.empty() &&
          (tail_spec.op_type == "Add" || tail_spec.op_type == "Mul")) {
        std::swap(tail_inputs[0], tail_inputs[1]);
        std::swap(tail_spec.inputs[0], tail_spec.inputs[1]);
      }
      // Other tails that read it at input > 0 (Sub(1, x), Div(w, x)) only go to kernels that
      // take a position (PositionalFusableKernel).
      const size_t position =
          static_cast<size_t>(std::find(tail_inputs.begin(), tail_inputs.end(), slot) - tail_inputs.begin());
      auto* positional = dynamic_cast<PositionalFusableKernel*>(head.kernel.get());
      if (position != 0 && !positional) break;
      if (std::count_if(tail.outputs.begin(), tail.outputs.end(), [](int s) { return s >= 0; }) != 1 ||
          tail.outputs[0] < 0)
        break;
      // Every other slot the tail reads exists before the head runs. Constant nodes' values are in
      // the frame from the start (plan_time_values_), wherever the node sits: torch places each
      // Clip's min/max Constant right before the Clip, after the Conv feeding it.
      bool extras_ready = true;
      for (int s : uses[j])
        if (s != slot && position_of_producer[s] >= static_cast<int>(i) && !g.plan_time_values_.count(s))
          extras_ready = false;
      if (!extras_ready) break;
      PlanKernelInit tail_init(tail_spec, env, g, tail_inputs, graph);
      const size_t first_extra_input = head.inputs.size();
      const bool accepted = position == 0 ? fusable->fuse_tail(tail_init, first_extra_input)
                                          : positional->fuse_tail_at(tail_init, position, first_extra_input);
      if (!accepted) break;
      head.tails.push_back({tail_spec, tail_inputs, position, first_extra_input});

      for (size_t k = 0; k < tail_inputs.size(); ++k) {
        if (k == position) continue;
        head.inputs.push_back(tail_inputs[k]);
        head.spec.inputs.push_back(tail_spec.inputs[k]);
      }
      head.outputs[out_index] = tail.outputs[0];
      head.spec.outputs[out_index] = tail.spec.outputs[0];
      head.label += " (fused with " + tail.label + ")";
      position_of_producer[tail.outputs[0]] = static_cast<int>(i);
      for (int s : uses[j]) {
        auto& c = consumers[s];
        c.erase(std::remove(c.begin(), c.end(), j), c.end());
        if (s != slot && std::find(uses[i].begin(), uses[i].end(), s) == uses[i].end()) {
          uses[i].push_back(s);
          c.push_back(static_cast<int>(i));
        }
      }
      absorbed[j] = true;
      ++g.fused_nodes_;
    }
  }
  if (!g.fused_nodes_) return;
  std::vector<PlannedNode> kept;
  std::vector<std::vector<int>> kept_uses;
  for (size_t i = 0; i < num_nodes; ++i)
    if (!absorbed[i]) {
      kept.push_back(std::move(g.nodes_[i]));
      kept_uses.push_back(std::move(uses[i]));
    }
  g.nodes_ = std::move(kept);
  uses = std::move(kept_uses);
}

/// Channels-last hand-off (runtime/channels_last.h): a producer writes channels-last when every
/// node reading its output reads it through an input that accepts channels-last. A value that is a
/// graph output, that a node reads without listing it as an input (a subgraph capture), or that
/// lives in a Concat's shared buffer (whose slices are NCHW blocks) keeps the ONNX layout. A
/// producer that would change the layout itself to write channels-last (BatchNormalization reading
/// such a buffer) hands off only to readers that would otherwise change it (convolutions).
void hand_off_channels_last(Subgraph& g, const std::vector<std::vector<int>>& uses) {
  std::vector<bool> keep_layout(g.slot_names_.size(), false);
  for (int s : g.output_slots_) keep_layout[s] = true;
  for (const auto& [s, placed] : g.placed_values_) keep_layout[s] = true;
  std::vector<std::vector<std::pair<size_t, size_t>>> readers(g.slot_names_.size());  // (node, input)
  for (size_t j = 0; j < g.nodes_.size(); ++j) {
    const auto& inputs = g.nodes_[j].inputs;
    for (size_t k = 0; k < inputs.size(); ++k)
      if (inputs[k] >= 0) readers[inputs[k]].emplace_back(j, k);
    for (int s : uses[j])
      if (std::find(inputs.begin(), inputs.end(), s) == inputs.end()) keep_layout[s] = true;
  }
  // Whether every reader of `slot` reads it through an input that accepts channels-last; a
  // reader that passes layouts through (Concat) accepts only when its own output is handed off
  // too (looked ahead a few such readers deep).
  std::function<bool(int, int)> readers_accept = [&](int slot, int depth) {
    if (slot < 0 || keep_layout[slot] || readers[slot].empty()) return false;
    for (auto [j, k] : readers[slot]) {
      auto* reader = dynamic_cast<ChannelsLastKernel*>(g.nodes_[j].kernel.get());
      if (!reader || !reader->can_read_channels_last(k)) return false;
      if (!reader->passes_layout_through()) continue;
      const std::vector<int>& outputs = g.nodes_[j].outputs;
      constexpr int kMaxLookAhead = 4;
      if (depth >= kMaxLookAhead || outputs.size() != 1 || !readers_accept(outputs[0], depth + 1)) return false;
    }
    return true;
  };
  // Whether every reader of `slot` would convert an NCHW value itself (after readers_accept).
  auto readers_prefer = [&](int slot) {
    for (auto [j, k] : readers[slot]) {
      auto* reader = dynamic_cast<ChannelsLastKernel*>(g.nodes_[j].kernel.get());
      if (!reader || !reader->prefers_channels_last(k)) return false;
    }
    return true;
  };
  for (auto& node : g.nodes_) {
    auto* producer = dynamic_cast<ChannelsLastKernel*>(node.kernel.get());
    if (!producer || !producer->can_write_channels_last()) continue;
    const auto live = std::count_if(node.outputs.begin(), node.outputs.end(), [](int s) { return s >= 0; });
    const int slot = node.outputs.empty() ? -1 : node.outputs[0];
    if (live != 1 || !readers_accept(slot, 0)) continue;
    if (producer->converts_to_channels_last() && !readers_prefer(slot)) continue;
    producer->write_channels_last();
    node.writes_channels_last = true;
    ++g.channels_last_values_;
    for (auto [j, k] : readers[slot]) {
      dynamic_cast<ChannelsLastKernel*>(g.nodes_[j].kernel.get())->read_channels_last(k);
      g.nodes_[j].reads_channels_last.push_back(k);
    }
  }
}

// One plan_graph call: the graph's steps in order, each a member, sharing the plan being built.
class GraphPlanner {
 public:
  GraphPlanner(const onnx::GraphProto& graph, const PlanEnv& env, const Subgraph* parent)
      : graph_(graph), env_(env), parent_(parent), plan_(std::make_shared<Subgraph>()), g_(*plan_),
        label_(parent ? "subgraph '" + graph.name() + "'" : "graph '" + graph.name() + "'") {}

  std::shared_ptr<Subgraph> plan() {
    add_inputs_and_initializers();
    expand_nodes();
    capture_outer_values();
    order_nodes();
    add_outputs();
    create_kernels();
    fuse();
    finalize_precisions();
    schedule_releases();
    return plan_;
  }

 private:
  int add_slot(const std::string& name) {
    auto it = g_.slot_of_.find(name);
    if (it != g_.slot_of_.end()) return it->second;
    const int s = static_cast<int>(g_.slot_names_.size());
    g_.slot_names_.push_back(name);
    g_.slot_of_[name] = s;
    return s;
  }

  // 1. Inputs and initializers.
  void add_inputs_and_initializers() {
    for (const auto& in : graph_.input()) {
      g_.input_names_.push_back(in.name());
      g_.input_meta_.push_back(model::meta_from_value_info(in));
      g_.input_slots_.push_back(add_slot(in.name()));
    }
    for (const auto& init : graph_.initializer()) {
      Tensor t = initializer_value(init);
      if (env_.precision == Precision::kFloat64 && is_floating(t.dtype())) t = t.cast(DType::kFloat64);
      initializers_.emplace_back(add_slot(init.name()), std::move(t));
    }
  }

  Tensor initializer_value(const onnx::TensorProto& init) const {
    if (!parent_ && env_.initializer_values && !init.has_raw_data()) {
      auto it = env_.initializer_values->find(init.name());
      if (it != env_.initializer_values->end()) return it->second;
    }
    return model::tensor_from_proto(init, env_.base_dir);
  }

  // 2. Inline functions, then give every node output a slot.
  void expand_nodes() {
    Expander expander(env_);
    for (const auto& node : graph_.node()) expander.expand(node, nullptr, nodes_, 0);
    lower_reduced_float_types();
    std::set<std::string> produced;
    for (size_t n = 0; n < nodes_.size(); ++n)
      for (const auto& out : nodes_[n].proto.output()) {
        if (out.empty()) continue;
        PARITY_CHECK_AT(produced.insert(out).second, {.tensor = out}, kInvalidModel, label_, ": value '", out,
                        "' is produced by more than one node");
        const int s = add_slot(out);
        if (producer_.size() <= static_cast<size_t>(s)) producer_.resize(s + 1, -1);
        producer_[s] = static_cast<int>(n);
      }
  }

  // 2a. A float16/bfloat16 main graph is carried in float32 on the optimized kernels
  // (runtime/rewrites/reduced_float_lowering.h): the kernels see float32 types from here on.
  void lower_reduced_float_types() {
    if (parent_ || !env_.lower_reduced_floats) return;
    ReducedFloatGraph lowered;
    for (auto& node : nodes_) lowered.nodes.push_back(&node.proto);
    lowered.inputs = g_.input_names_;
    for (const auto& out : graph_.output()) lowered.outputs.push_back(out.name());
    for (auto& [slot, tensor] : initializers_) lowered.initializers.emplace_back(g_.slot_names_[slot], &tensor);
    if (env_.value_types) lowered.types = *env_.value_types;
    for (const auto& out : graph_.output())
      if (out.has_type()) lowered.types.emplace(out.name(), out.type());
    const int carried = lower_reduced_floats(lowered);
    if (!carried) return;
    std::vector<ExpandedNode> nodes;
    for (auto& node : lowered.entry_nodes) nodes.push_back({std::move(node), nullptr});
    for (size_t n = 0; n < nodes_.size(); ++n)
      if (!lowered.removed[n]) nodes.push_back(std::move(nodes_[n]));
    for (auto& node : lowered.exit_nodes) nodes.push_back({std::move(node), nullptr});
    // The rewrite's own nodes resolve against parity's domain.
    env_.opsets.emplace(kParityDomain, 1);
    for (auto& node : nodes)
      if (node.proto.domain() == kParityDomain && node.opsets && !node.opsets->count(kParityDomain)) {
        auto opsets = std::make_shared<std::map<std::string, int>>(*node.opsets);
        opsets->emplace(kParityDomain, 1);
        node.opsets = std::move(opsets);
      }
    nodes_ = std::move(nodes);
    env_.value_types = std::make_shared<const std::map<std::string, onnx::TypeProto>>(std::move(lowered.types));
    g_.kernel_value_types_ = env_.value_types;
    g_.reduced_float_values_ = carried;
  }

  // 3. Outer-scope captures (then the initializers become the plan's constants).
  void capture_outer_values() {
    std::set<std::string> used;
    for (const auto& n : nodes_) add_node_uses(n.proto, used);
    for (const auto& out : graph_.output()) used.insert(out.name());
    for (const auto& name : used) {
      if (g_.slot_of_.count(name)) continue;
      const int outer = parent_ ? parent_->slot(name) : -1;
      PARITY_CHECK_AT(outer >= 0, {.tensor = name}, kInvalidModel, label_, ": value '", name,
                      "' is used but not produced by any node, initializer or graph input");
      g_.captures_.emplace_back(add_slot(name), outer);
    }
    const size_t num_slots = g_.slot_names_.size();
    producer_.resize(num_slots, -1);
    g_.is_initializer_.assign(num_slots, false);
    for (auto& [slot, t] : initializers_) {
      g_.is_initializer_[slot] = true;
      g_.constants_.emplace_back(slot, Value(std::move(t)));
    }
  }

  // 4. Topological order (stable: original order wherever dependencies allow).
  void order_nodes() {
    node_uses_.resize(nodes_.size());
    for (size_t n = 0; n < nodes_.size(); ++n) {
      std::set<std::string> u;
      add_node_uses(nodes_[n].proto, u);
      for (const auto& name : u) node_uses_[n].push_back(g_.slot_of_.at(name));
    }
    std::vector<std::vector<size_t>> deps(nodes_.size());
    for (size_t n = 0; n < nodes_.size(); ++n)
      for (int s : node_uses_[n])
        if (producer_[s] >= 0 && producer_[s] != static_cast<int>(n)) deps[n].push_back(producer_[s]);
    std::vector<bool> placed(nodes_.size(), false);
    for (size_t n : stable_topological_order(deps)) {
      order_.push_back(static_cast<int>(n));
      placed[n] = true;
    }
    if (order_.size() != nodes_.size()) {
      for (size_t n = 0; n < nodes_.size(); ++n)
        if (!placed[n])
          fail_at({.node = nodes_[n].proto.name()}, ErrorCode::kInvalidModel, label_,
                  ": the graph has a cycle through node '", nodes_[n].proto.name(), "' (", nodes_[n].proto.op_type(),
                  ")");
    }
  }

  // 5. Outputs.
  void add_outputs() {
    for (const auto& out : graph_.output()) {
      g_.output_names_.push_back(out.name());
      g_.output_meta_.push_back(model::meta_from_value_info(out));
      g_.output_slots_.push_back(g_.slot_of_.at(out.name()));
    }
  }

  // 6. Kernels, in execution order (Constant values are folded so later kernels can see them).
  void create_kernels() {
    for (int n : order_) {
      PlannedNode pn = plan_node(nodes_[n]);
      if (pn.spec.domain.empty() && pn.spec.op_type == "Constant" && pn.inputs.empty()) fold_constant(pn);
      g_.nodes_.push_back(std::move(pn));
    }
  }

  // One node's spec, slots and kernel (the optimized one where the tier and precision allow).
  PlannedNode plan_node(const ExpandedNode& node) {
    const auto& proto = node.proto;
    const auto& opsets = node.opsets ? *node.opsets : env_.opsets;
    PlannedNode pn;
    pn.spec.name = proto.name();
    pn.spec.op_type = proto.op_type();
    pn.spec.domain = normalize_domain(proto.domain());
    auto op_it = opsets.find(pn.spec.domain);
    pn.spec.opset = op_it == opsets.end() ? 0 : op_it->second;
    for (const auto& in : proto.input()) {
      pn.spec.inputs.push_back(in);
      pn.inputs.push_back(in.empty() ? -1 : g_.slot_of_.at(in));
    }
    for (const auto& out : proto.output()) {
      pn.spec.outputs.push_back(out);
      pn.outputs.push_back(out.empty() ? -1 : g_.slot_of_.at(out));
    }
    pn.label = node_label(pn.spec);
    const KernelDef* def = resolve_kernel(pn);
    pn.spec.since_version = def->since_version;
    for (const auto& a : proto.attribute()) pn.spec.attributes[a.name()] = model::attribute_from_proto(a, env_.base_dir);
    try {
      build_kernel(pn.spec, pn.inputs, *def, env_.precision == Precision::kFloat32, pn);
    } catch (const Error& e) {
      rethrow_at_node(pn, e);
    }
    PARITY_ASSERT(pn.kernel, "kernel factory for ", pn.label, " returned null");
    pn.kernel_spec = pn.spec;
    pn.kernel_inputs = pn.inputs;
    return pn;
  }

  /// Tactic options at work (runtime/tactics.h): a replayed tactic is built or refused; forbidden
  /// families leave the candidates; with timing, every candidate that accepts the node is built
  /// and timed and the fastest kept. Sets `out.kernel` when it decided, else trims `candidates`.
  void choose_tactic(const NodeSpec& spec, const KernelInit& init, std::vector<const KernelDef*>& candidates,
                     PlannedNode& out) const {
    const TacticOptions& options = *env_.tactics;
    const std::string label = node_label(spec);
    if (auto it = options.replay.find(tactic_node_key(spec)); it != options.replay.end()) {
      std::string known;
      for (const KernelDef* c : candidates) {
        known += (known.empty() ? "" : ", ") + tactic_name(*c);
        if (tactic_name(*c) != it->second) continue;
        out.kernel = c->create(init);
        PARITY_CHECK_AT(out.kernel != nullptr, {.node = node_error_name(spec)}, kInvalidArgument, "--load-tactics: ",
                        label, ": tactic '", it->second, "' declines this node here");
        out.tactic = it->second;
        return;
      }
      fail_at({.node = node_error_name(spec)}, ErrorCode::kInvalidArgument, "--load-tactics: ", label,
              " was recorded with tactic '", it->second, "', which is not one of its tactics here (", known, ")");
    }
    if (!options.forbidden.empty()) {
      auto forbidden = [&](const KernelDef* c) {
        const std::string name = tactic_name(*c);
        const std::string family = name.substr(0, name.find(':'));
        return std::find(options.forbidden.begin(), options.forbidden.end(), name) != options.forbidden.end() ||
               std::find(options.forbidden.begin(), options.forbidden.end(), family) != options.forbidden.end();
      };
      std::vector<const KernelDef*> allowed;
      for (const KernelDef* c : candidates)
        if (!forbidden(c)) allowed.push_back(c);
      if (allowed.empty()) allowed.push_back(candidates.back());  // the reference kernel always remains
      candidates = std::move(allowed);
    }
    if (options.random_seed != 0 && candidates.size() > 1) {
      std::vector<std::pair<const KernelDef*, std::unique_ptr<Kernel>>> accepting;
      for (const KernelDef* c : candidates)
        if (std::unique_ptr<Kernel> kernel = c->create(init)) accepting.emplace_back(c, std::move(kernel));
      if (accepting.empty()) return;
      uint64_t h = options.random_seed * 0x9e3779b97f4a7c15ull ^ std::hash<std::string>{}(tactic_node_key(spec));
      h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9ull;
      auto& [def, kernel] = accepting[(h ^ (h >> 29)) % accepting.size()];
      out.kernel = std::move(kernel);
      out.tactic = tactic_name(*def);
      return;
    }
    if (!options.time || candidates.size() < 2) return;
    // One timing per profile at its opt shapes (one at the static shapes without profiles).
    std::vector<InputShapes> timing_shapes;
    for (const auto& types : env_.timing_types)
      timing_shapes.push_back([&spec, &init, types](size_t i) -> std::optional<Shape> {
        auto it = i < spec.inputs.size() ? types->find(spec.inputs[i]) : types->end();
        if (it == types->end()) return init.input_static_shape(i);
        return static_shape_of(it->second);
      });
    if (timing_shapes.empty()) timing_shapes.emplace_back();
    double best = 0;
    for (const KernelDef* c : candidates) {
      std::unique_ptr<Kernel> kernel = c->create(init);
      if (!kernel) continue;
      std::optional<double> seconds = 0.0;
      for (const InputShapes& shapes : timing_shapes) {
        const std::string key = timing_key(init, tactic_name(*c), shapes);
        std::optional<double> one = options.cache ? options.cache->find(key) : std::nullopt;
        if (!one) {
          one = time_kernel(*kernel, init, shapes);
          if (one && options.cache) options.cache->put(key, *one);
        }
        if (!one) {
          seconds.reset();
          break;
        }
        *seconds += *one;
      }
      if (!seconds) return;  // not timeable here: the preferred candidate, as without timing
      if (!out.kernel || *seconds < best) {
        best = *seconds;
        out.kernel = std::move(kernel);
        out.tactic = tactic_name(*c);
      }
    }
  }

  /// The layer's precision under the build's reduced-precision settings (fp32 without them).
  DType layer_precision(const NodeSpec& spec, const KernelInit& init) const {
    if (!env_.reduced) return DType::kFloat32;
    std::vector<std::string> warnings;
    const DType precision = choose_layer_precision(spec, init.input_dtype(0), *env_.reduced, &warnings);
    for (const auto& w : warnings) logger().warning(w);
    return precision;
  }

  /// The activation scales of an int8 layer's operands that are not constants.
  std::map<size_t, float> int8_scales(const NodeSpec& spec, const KernelInit& init) const {
    std::map<size_t, float> scales;
    for (size_t i : int8_operand_inputs(spec)) {
      if (!init.has_input(i) || init.constant_input(i)) continue;
      auto it = env_.reduced->int8_scales.find(spec.inputs[i]);
      if (it != env_.reduced->int8_scales.end()) scales[i] = it->second;
    }
    return scales;
  }

  /// Builds `out.kernel` (the optimized variant where allowed, else the reference), wrapped for
  /// the layer's precision, and records the tactic and precision.
  void build_kernel(const NodeSpec& spec, const std::vector<int>& slots, const KernelDef& def, bool optimized_allowed,
                    PlannedNode& out) const {
    PlanKernelInit plain_init(spec, env_, g_, slots, graph_);
    const DType precision = layer_precision(spec, plain_init);
    std::unique_ptr<KernelInit> reduced_init;
    if (precision != DType::kFloat32) reduced_init = make_reduced_precision_init(plain_init, precision);
    const KernelInit& init = reduced_init ? *reduced_init : plain_init;
    const auto& registry = KernelRegistry::instance();
    out.kernel.reset();
    std::vector<const KernelDef*> candidates;  // preferred first
    if (env_.tier == KernelTier::kOptimized && optimized_allowed)
      if (const KernelDef* optimized = registry.resolve_optimized(def, spec.opset)) candidates.push_back(optimized);
    candidates.push_back(&def);
    if (env_.tactics) choose_tactic(spec, init, candidates, out);
    for (const KernelDef* candidate : candidates) {
      if (out.kernel) break;
      out.kernel = candidate->create(init);
      if (out.kernel) out.tactic = tactic_name(*candidate);
    }
    PARITY_ASSERT(out.kernel, "kernel factory for ", node_label(spec), " returned null");
    std::map<size_t, float> scales = precision == DType::kInt8 ? int8_scales(spec, plain_init) : std::map<size_t, float>{};
    out.kernel = wrap_reduced_precision(std::move(out.kernel), spec, precision, std::move(scales));
    out.precision = precision;
  }

  // The kernel registered for the node's op at its opset. A node parity cannot run, because its
  // op is unknown or its domain's opset is newer than the ONNX release parity implements, is one
  // line naming the node, op, domain and version, and the newest version of the op parity has.
  static const KernelDef* resolve_kernel(const PlannedNode& pn) {
    const auto& registry = KernelRegistry::instance();
    const auto versions = registry.versions(pn.spec.domain, pn.spec.op_type);
    const std::string newest = versions.empty() ? std::string("parity implements no version of it")
                                                : str_cat("the newest version parity implements is ", versions.back());
    const std::optional<int> newest_opset = newest_known_opset(pn.spec.domain);
    const ErrorContext at_node{.node = node_error_name(pn.spec)};
    if (newest_opset && pn.spec.opset > *newest_opset)
      fail_at(at_node, ErrorCode::kUnsupported, pn.label, ": op '", pn.spec.op_type, "' at ",
              display_domain(pn.spec.domain), " opset ", pn.spec.opset, " is newer than parity knows (it implements ",
              display_domain(pn.spec.domain), " up to opset ", *newest_opset, " as of ONNX ", kNewestKnownOnnxRelease,
              "); ", newest);
    const KernelDef* def = registry.resolve(pn.spec.domain, pn.spec.op_type, pn.spec.opset);
    if (def) return def;
    if (versions.empty())
      fail_at(at_node, ErrorCode::kUnsupported, pn.label, ": parity has no kernel for op '", pn.spec.op_type,
              "' in domain '", display_domain(pn.spec.domain), "' (opset ", pn.spec.opset, "); ", newest);
    fail_at(at_node, ErrorCode::kUnsupported, pn.label, ": no kernel for op '", pn.spec.op_type, "' (domain ",
            display_domain(pn.spec.domain), ") at opset ", pn.spec.opset, "; versions that exist: ",
            join_ints(versions), "; ", newest);
  }

  // A Constant node's value, computed now so that later kernels see it at plan time.
  void fold_constant(PlannedNode& pn) {
    FoldContext fold(pn, env_.precision);
    pn.kernel->compute(fold);
    bool all_outputs = true;
    for (size_t i = 0; i < pn.outputs.size(); ++i) {
      if (pn.outputs[i] < 0) continue;
      if (fold.outputs_[i].is_empty()) all_outputs = false;
      else g_.plan_time_values_[pn.outputs[i]] = fold.outputs_[i];
    }
    pn.folded = all_outputs;
  }

  // 7. Fusion: optimized kernels absorb the elementwise node that consumes their output.
  void fuse() {
    uses_.resize(g_.nodes_.size());  // per planned node, slots it reads
    for (size_t i = 0; i < g_.nodes_.size(); ++i) uses_[i] = node_uses_[order_[i]];
    if (!env_.fuse) return;
    // Kernels the rewrites asked for, with their tactic and precision.
    std::map<const Kernel*, std::pair<std::string, DType>> rewritten;
    auto make_kernel = [&](const NodeSpec& spec, const std::vector<int>& slots) {
      const KernelDef* def = KernelRegistry::instance().resolve(spec.domain, spec.op_type, spec.opset);
      PARITY_ASSERT(def, "no kernel for the rewritten node ", spec.domain, "::", spec.op_type);
      PlannedNode built;
      build_kernel(spec, slots, *def, true, built);
      rewritten[built.kernel.get()] = {built.tactic, built.precision};
      return std::move(built.kernel);
    };
    // An int8 plan runs the QDQ form of quantized convolutions and products on int8 kernels.
    if (env_.reduced && env_.reduced->int8) g_.fused_nodes_ += fuse_qdq_layers(g_, uses_, make_kernel);
    g_.fused_nodes_ += fold_batch_norms_into_convs(g_, uses_, make_kernel);
    g_.fused_nodes_ += rewrite_decomposed_activations(
        g_, uses_, [&](const NodeSpec& spec) { return make_kernel(spec, {g_.slot(spec.inputs[0])}); });
    g_.fused_nodes_ += rewrite_channel_shuffles(
        g_, uses_, [&](const NodeSpec& spec) { return make_kernel(spec, {g_.slot(spec.inputs[0])}); });
    for (auto& node : g_.nodes_)
      if (auto it = rewritten.find(node.kernel.get()); it != rewritten.end()) {
        node.tactic = it->second.first;
        node.precision = it->second.second;
        node.kernel_spec = node.spec;
        node.kernel_inputs = node.inputs;
      }
    fuse_tails(g_, uses_, env_, graph_);
    place_concats();
    hand_off_channels_last(g_, uses_);
  }

  // 7a. Producers write Concats' inputs into their slices of its output (before the channels-last
  // hand-off, which leaves those values in NCHW). fp32 plans only: a reduced-precision layer may
  // store its output in another dtype than the model declares. KernelOptions::concat_placement
  // = false leaves every Concat copying, for measuring one against the other.
  void place_concats() {
    if (!env_.kernel_options.concat_placement || env_.precision != Precision::kFloat32 || env_.reduced || !env_.value_types) return;
    place_concat_inputs(g_, [&](int slot) -> std::optional<StaticType> {
      auto it = env_.value_types->find(g_.slot_names_[slot]);
      if (it == env_.value_types->end() || !it->second.has_tensor_type()) return std::nullopt;
      std::optional<Shape> shape = static_shape_of(it->second);
      if (!shape) return std::nullopt;
      return StaticType{static_cast<DType>(it->second.tensor_type().elem_type()), std::move(*shape)};
    });
  }

  // 7b. Reduced-precision layers learn which inputs arrive already rounded.
  void finalize_precisions() {
    if (env_.reduced) finalize_reduced_precision(g_);
  }

  // 8. Lifetimes: release each slot after its last use; outputs live to the end.
  void schedule_releases() {
    const size_t final_slots = g_.slot_names_.size();  // folding may have added constant slots
    g_.keep_alive_.assign(final_slots, false);
    for (int s : g_.output_slots_) g_.keep_alive_[s] = true;
    std::vector<int> last_use(final_slots, -1);
    for (size_t i = 0; i < g_.nodes_.size(); ++i) {
      for (int s : uses_[i]) last_use[s] = static_cast<int>(i);
      for (int s : g_.nodes_[i].outputs)
        if (s >= 0 && last_use[s] < static_cast<int>(i)) last_use[s] = static_cast<int>(i);
    }
    for (size_t s = 0; s < final_slots; ++s)
      if (!g_.keep_alive_[s] && last_use[s] >= 0) g_.nodes_[last_use[s]].release.push_back(static_cast<int>(s));
  }

  const onnx::GraphProto& graph_;
  PlanEnv env_;  // a copy: the reduced-float lowering gives its kernels other value types
  const Subgraph* parent_;
  std::shared_ptr<Subgraph> plan_;
  Subgraph& g_;
  const std::string label_;  // "graph 'name'" or "subgraph 'name'", for errors
  std::vector<std::pair<int, Tensor>> initializers_;
  std::vector<ExpandedNode> nodes_;
  std::vector<int> producer_;                 // per slot: node index or -1
  std::vector<std::vector<int>> node_uses_;   // per expanded node, slots it reads
  std::vector<int> order_;                    // expanded node indices in execution order
  std::vector<std::vector<int>> uses_;        // per planned node, slots it reads
};

}  // namespace

std::string tactic_name(const KernelDef& def) {
  std::string file = std::filesystem::path(def.source_file).stem().string();
  return (def.tier == KernelTier::kOptimized ? "optimized:" : "reference:") + file;
}

std::shared_ptr<Subgraph> plan_graph(const onnx::GraphProto& graph, const PlanEnv& env, const Subgraph* parent) {
  return GraphPlanner(graph, env, parent).plan();
}

}  // namespace parity::runtime
