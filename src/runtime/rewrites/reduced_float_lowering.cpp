#include "runtime/rewrites/reduced_float_lowering.h"

#include <algorithm>
#include <set>

#include "model/proto_convert.h"
#include "runtime/rewrites/chain_replacement.h"

namespace parity::runtime {

namespace {

using TypeMap = std::map<std::string, onnx::TypeProto>;

constexpr int kFloat = onnx::TensorProto::FLOAT;
// Names of the values the rewrite adds at the graph's edges.
constexpr const char* kCarriedSuffix = "__carried_float32";

bool is_reduced(int elem_type) { return elem_type == onnx::TensorProto::FLOAT16 || elem_type == onnx::TensorProto::BFLOAT16; }

/// The tensor element type `types` gives `name` (0 when unknown or not a tensor).
int elem_type_of(const TypeMap& types, const std::string& name) {
  auto it = types.find(name);
  if (it == types.end() || !it->second.has_tensor_type()) return 0;
  return it->second.tensor_type().elem_type();
}

/// Replaces float16/bfloat16 element types anywhere in `type` (tensors, sequences, optionals,
/// maps) by float32; returns whether anything changed.
bool widen_type(onnx::TypeProto& type) {
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType:
      if (!is_reduced(type.tensor_type().elem_type())) return false;
      type.mutable_tensor_type()->set_elem_type(kFloat);
      return true;
    case onnx::TypeProto::kSparseTensorType:
      if (!is_reduced(type.sparse_tensor_type().elem_type())) return false;
      type.mutable_sparse_tensor_type()->set_elem_type(kFloat);
      return true;
    case onnx::TypeProto::kSequenceType:
      return widen_type(*type.mutable_sequence_type()->mutable_elem_type());
    case onnx::TypeProto::kOptionalType:
      return widen_type(*type.mutable_optional_type()->mutable_elem_type());
    case onnx::TypeProto::kMapType:
      return widen_type(*type.mutable_map_type()->mutable_value_type());
    default:
      return false;
  }
}

bool has_reduced_type(const onnx::TypeProto& type) {
  onnx::TypeProto copy = type;
  return widen_type(copy);
}

const onnx::AttributeProto* find_attribute(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

/// A float16/bfloat16 tensor attribute as float32 (the same values).
void widen_tensor_proto(onnx::TensorProto& proto) {
  if (!is_reduced(proto.data_type())) return;
  const Tensor wide = model::tensor_from_proto(proto).cast(DType::kFloat32);
  const std::string name = proto.name();
  proto.Clear();
  model::tensor_to_proto(wide, &proto, name);
}

/// Attributes that name a result's element type (EyeLike, RandomNormal, DequantizeLinear-24,
/// the window functions, ...). Cast's `to` is handled with the Cast.
bool names_result_type(const std::string& attribute) {
  return attribute == "dtype" || attribute == "output_dtype" || attribute == "output_datatype";
}

void widen_attributes(onnx::NodeProto& node) {
  for (auto& a : *node.mutable_attribute()) {
    if (a.type() == onnx::AttributeProto::TENSOR) widen_tensor_proto(*a.mutable_t());
    for (auto& t : *a.mutable_tensors()) widen_tensor_proto(t);
    if (a.type() == onnx::AttributeProto::INT && names_result_type(a.name()) && is_reduced(static_cast<int>(a.i())))
      a.set_i(kFloat);
  }
}

bool is_onnx_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

bool has_subgraph(const onnx::NodeProto& node) {
  for (const auto& a : node.attribute())
    if (a.has_g() || a.graphs_size() > 0) return true;
  return false;
}

onnx::NodeProto make_cast(const std::string& name, const std::string& input, const std::string& output, int to) {
  onnx::NodeProto node;
  node.set_name(name);
  node.set_op_type("Cast");
  node.add_input(input);
  node.add_output(output);
  auto* attr = node.add_attribute();
  attr->set_name("to");
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(to);
  return node;
}

/// Turns `node` (a Cast or CastLike) into RoundToReducedFloat(to) of its first input.
void make_rounding(onnx::NodeProto& node, int to) {
  const std::string input = node.input(0);
  node.clear_input();
  node.add_input(input);
  node.clear_attribute();
  node.set_domain(kParityDomain);
  node.set_op_type("RoundToReducedFloat");
  auto* attr = node.add_attribute();
  attr->set_name("to");
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(to);
}

/// The element type a Cast or CastLike converts to (0 when it cannot be told).
int cast_target(const onnx::NodeProto& node, const TypeMap& types) {
  if (node.op_type() == "Cast") {
    const auto* to = find_attribute(node, "to");
    return to ? static_cast<int>(to->i()) : 0;
  }
  return node.input_size() > 1 ? elem_type_of(types, node.input(1)) : 0;
}

bool is_cast(const onnx::NodeProto& node) {
  return is_onnx_domain(node.domain()) && (node.op_type() == "Cast" || node.op_type() == "CastLike") &&
         node.input_size() >= 1 && node.output_size() == 1;
}

/// Whether the rewrite can lower `g` without changing what its callers see.
bool can_lower(const ReducedFloatGraph& g) {
  bool any_reduced = false;
  for (const auto& [name, t] : g.initializers) any_reduced = any_reduced || is_reduced(static_cast<int>(t->dtype()));
  for (const auto& [name, type] : g.types) any_reduced = any_reduced || has_reduced_type(type);
  if (!any_reduced) return false;
  std::set<std::string> produced;
  for (const onnx::NodeProto* node : g.nodes) {
    if (!is_onnx_domain(node->domain()) || has_subgraph(*node)) return false;
    if (is_cast(*node) && cast_target(*node, g.types) == 0) return false;
    for (const auto& o : node->output()) produced.insert(o);
  }
  for (const auto& out : g.outputs) {
    const bool is_input = std::find(g.inputs.begin(), g.inputs.end(), out) != g.inputs.end();
    auto it = g.types.find(out);
    if (!produced.count(out) && !is_input && (it == g.types.end() || has_reduced_type(it->second))) return false;
  }
  return true;
}

class Lowering {
 public:
  explicit Lowering(ReducedFloatGraph& g) : g_(g), original_types_(g.types) {
    for (const auto& out : g.outputs) is_output_.insert(out);
  }

  int run() {
    g_.removed.assign(g_.nodes.size(), false);
    record_widening_casts();
    narrow_outputs_on_exit();
    widen_inputs_on_entry();
    for (size_t n = 0; n < g_.nodes.size(); ++n) lower_node(n);
    const int unlisted_initializers = widen_initializers();
    // Values at the edges count too: a graph of one Cast changes only there.
    const int carried = widen_types() + unlisted_initializers +
                        static_cast<int>(g_.entry_nodes.size() + g_.exit_nodes.size());
    apply_renames();
    return carried;
  }

 private:
  // Cast(to=FLOAT) nodes whose input is float16/bfloat16: output name -> (input, its type).
  void record_widening_casts() {
    for (const onnx::NodeProto* node : g_.nodes) {
      if (!is_cast(*node) || cast_target(*node, original_types_) != kFloat) continue;
      const int from = elem_type_of(original_types_, node->input(0));
      if (is_reduced(from)) widened_[node->output(0)] = {node->input(0), from};
    }
  }

  // A float16 output is computed as float32 under another name, then cast to its declared type.
  void narrow_outputs_on_exit() {
    for (onnx::NodeProto* node : g_.nodes)
      for (auto& o : *node->mutable_output()) {
        if (!is_output_.count(o)) continue;
        const int type = elem_type_of(original_types_, o);
        if (!is_reduced(type)) continue;
        const std::string carried = o + kCarriedSuffix;
        g_.exit_nodes.push_back(make_cast(o + "/narrowed_on_exit", carried, o, type));
        rename_[o] = carried;
        add_carried_type(o, carried);
        o = carried;
      }
  }

  // A float16 input (fed, or its initializer default) is widened once, on entry.
  void widen_inputs_on_entry() {
    std::map<std::string, int> initializer_types;
    for (const auto& [name, t] : g_.initializers) initializer_types[name] = static_cast<int>(t->dtype());
    for (const auto& in : g_.inputs) {
      int type = elem_type_of(original_types_, in);
      if (type == 0 && initializer_types.count(in)) type = initializer_types[in];
      if (!is_reduced(type)) continue;
      const std::string carried = in + kCarriedSuffix;
      g_.entry_nodes.push_back(make_cast(in + "/widened_on_entry", in, carried, kFloat));
      rename_[in] = carried;
      add_carried_type(in, carried);
    }
  }

  void add_carried_type(const std::string& name, const std::string& carried) {
    auto it = original_types_.find(name);
    onnx::TypeProto type = it != original_types_.end() ? it->second : onnx::TypeProto();
    if (it == original_types_.end()) type.mutable_tensor_type()->set_elem_type(kFloat);
    widen_type(type);
    g_.types[carried] = type;
  }

  void lower_node(size_t n) {
    onnx::NodeProto& node = *g_.nodes[n];
    if (!is_cast(node)) {
      widen_attributes(node);
      return;
    }
    const std::string& input = node.input(0);
    const std::string& output = node.output(0);
    const int to = cast_target(node, original_types_);
    const int from = elem_type_of(original_types_, input);
    // A graph output keeps its node (a Cast to float32 of a float32 value hands it on as is).
    const bool removable = !is_output_.count(output);
    if (to == kFloat && is_reduced(from)) {
      if (removable) drop(n, input);
      else keep_as_cast_to_float(node);
      return;
    }
    if (!is_reduced(to)) return;
    if (auto it = widened_.find(input); it != widened_.end() && it->second.second == to && removable) {
      drop(n, it->second.first);  // float16 -> float32 -> float16: the pair cancels
      return;
    }
    if (from == to && removable) {
      drop(n, input);
      return;
    }
    if (from == onnx::TensorProto::STRING) keep_as_cast_to_float(node);
    else make_rounding(node, to);
  }

  void drop(size_t n, const std::string& replacement) {
    g_.removed[n] = true;
    rename_[g_.nodes[n]->output(0)] = replacement;
  }

  static void keep_as_cast_to_float(onnx::NodeProto& node) {
    const std::string name = node.name(), input = node.input(0), output = node.output(0);
    node = make_cast(name, input, output, kFloat);
  }

  // Returns how many were widened that `types` does not list.
  int widen_initializers() {
    int unlisted = 0;
    for (auto& [name, t] : g_.initializers) {
      if (!is_reduced(static_cast<int>(t->dtype()))) continue;
      if (std::find(g_.inputs.begin(), g_.inputs.end(), name) != g_.inputs.end()) continue;  // widened on entry
      *t = t->cast(DType::kFloat32);
      if (!g_.types.count(name)) ++unlisted;
    }
    return unlisted;
  }

  // Every value inside the graph is float32 now; the graph's inputs and outputs keep their types.
  int widen_types() {
    std::set<std::string> edges(g_.inputs.begin(), g_.inputs.end());
    edges.insert(g_.outputs.begin(), g_.outputs.end());
    int carried = 0;
    for (auto& [name, type] : g_.types)
      if (!edges.count(name) && widen_type(type)) ++carried;
    return carried;
  }

  // Follows renames to the end (a dropped Cast may read another dropped Cast's output); a chain
  // is never longer than the map.
  std::string resolve(std::string name) const {
    for (size_t step = 0; step <= rename_.size(); ++step) {
      auto it = rename_.find(name);
      if (it == rename_.end() || it->second == name) return name;
      name = it->second;
    }
    return name;
  }

  void apply_renames() {
    auto rename_inputs = [&](onnx::NodeProto& node) {
      for (auto& in : *node.mutable_input())
        if (!in.empty()) in = resolve(in);
    };
    for (size_t n = 0; n < g_.nodes.size(); ++n)
      if (!g_.removed[n]) rename_inputs(*g_.nodes[n]);
    for (auto& node : g_.exit_nodes) rename_inputs(node);
    // An entry node reads the graph input itself, not its carried name.
  }

  ReducedFloatGraph& g_;
  const TypeMap original_types_;
  std::set<std::string> is_output_;
  std::map<std::string, std::pair<std::string, int>> widened_;
  std::map<std::string, std::string> rename_;
};

}  // namespace

int lower_reduced_floats(ReducedFloatGraph& g) {
  g.removed.assign(g.nodes.size(), false);
  if (!can_lower(g)) return 0;
  return Lowering(g).run();
}

}  // namespace parity::runtime
