#include "tools/fold.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <limits>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/logger.h"
#include "model/transforms/extract.h"
#include "runtime/session.h"

namespace parity::tools {

namespace {

// Ops whose results differ per run, or that the folding pass must not evaluate.
const std::set<std::string>& unfoldable_ops() {
  static const std::set<std::string> ops = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                            "RandomUniformLike", "Multinomial", "Bernoulli", "Dropout"};
  return ops;
}

bool is_graph_input(const model::Graph& g, const model::Value* v) {
  return std::any_of(g.inputs.begin(), g.inputs.end(), [&](const auto& in) { return in.get() == v; });
}

bool is_constant_value(const model::Graph& g, const model::ValuePtr& v) {
  return v && v->is_constant() && !is_graph_input(g, v.get());
}

void add_initializer(model::Graph& g, const model::ValuePtr& v) {
  if (std::none_of(g.initializers.begin(), g.initializers.end(), [&](const auto& c) { return c == v; }))
    g.initializers.push_back(v);
}

}  // namespace

size_t lower_constant_nodes(model::Graph& g) {
  size_t folded = 0;
  std::erase_if(g.nodes, [&](const model::NodePtr& node) {
    if (node->op_type != "Constant" || !node->domain.empty() || node->outputs.size() != 1 || !node->outputs[0])
      return false;
    if (node->attrs.size() != 1) return false;
    const model::Attribute& a = node->attrs.begin()->second;
    Tensor value;
    switch (a.type) {
      case model::AttrType::kTensor: value = a.t; break;
      case model::AttrType::kFloat: value = Tensor::scalar<float>(a.f); break;
      case model::AttrType::kInt: value = Tensor::scalar<int64_t>(a.i); break;
      case model::AttrType::kFloats:
        value = Tensor::from_vector<float>({static_cast<int64_t>(a.floats.size())}, a.floats);
        break;
      case model::AttrType::kInts: value = Tensor::from_vector<int64_t>({static_cast<int64_t>(a.ints.size())}, a.ints); break;
      case model::AttrType::kString: value = Tensor::scalar<std::string>(a.s); break;
      case model::AttrType::kStrings:
        value = Tensor::from_vector<std::string>({static_cast<int64_t>(a.strings.size())}, a.strings);
        break;
      default: return false;  // sparse_value and the like stay nodes
    }
    const model::ValuePtr& out = node->outputs[0];
    out->set_values(value);
    add_initializer(g, out);
    ++folded;
    return true;
  });
  return folded;
}

namespace {

// Shape and Size of values whose shapes are static.
size_t fold_shape_nodes(model::Graph& g) {
  size_t folded = 0;
  std::erase_if(g.nodes, [&](const model::NodePtr& node) {
    if ((node->op_type != "Shape" && node->op_type != "Size") || !node->domain.empty()) return false;
    if (node->inputs.size() != 1 || !node->inputs[0] || node->outputs.size() != 1 || !node->outputs[0]) return false;
    const model::Value& in = *node->inputs[0];
    if (in.shape.unknown_rank || !in.shape.is_static()) return false;
    const Shape shape = in.shape.to_static();
    Tensor value;
    if (node->op_type == "Size") {
      value = Tensor::scalar<int64_t>(shape_numel(shape));
    } else {
      const int64_t rank = static_cast<int64_t>(shape.size());
      auto clamp_axis = [&](int64_t axis) { return std::clamp(axis < 0 ? axis + rank : axis, int64_t{0}, rank); };
      int64_t start = 0, end = rank;
      if (auto it = node->attrs.find("start"); it != node->attrs.end()) start = clamp_axis(it->second.i);
      if (auto it = node->attrs.find("end"); it != node->attrs.end()) end = clamp_axis(it->second.i);
      std::vector<int64_t> dims;
      for (int64_t i = start; i < end; ++i) dims.push_back(shape[static_cast<size_t>(i)]);
      value = Tensor::from_vector<int64_t>({static_cast<int64_t>(dims.size())}, dims);
    }
    node->outputs[0]->set_values(value);
    add_initializer(g, node->outputs[0]);
    ++folded;
    return true;
  });
  return folded;
}

// True when the value's dtype and shape are known and it needs more than `threshold` bytes.
bool static_bytes_above(const model::Value& v, size_t threshold) {
  if (threshold == std::numeric_limits<size_t>::max() || v.dtype == DType::kUndefined || v.dtype == DType::kString ||
      v.shape.unknown_rank)
    return false;
  double bytes = static_cast<double>(dtype_size(v.dtype));
  for (const auto& d : v.shape.dims) {
    if (!d.is_static()) return false;
    bytes *= static_cast<double>(d.value);
  }
  return bytes > static_cast<double>(threshold);
}

// Evaluates `nodes` (in graph order, all inputs constant or produced among them) and returns the
// values of `wanted`.
TensorMap evaluate(const model::Graph& g, const std::vector<model::NodePtr>& nodes, const std::vector<model::ValuePtr>& wanted) {
  model::Graph mini;
  mini.name = g.name + "_fold";
  mini.model = g.model;
  mini.base_dir = g.base_dir;
  mini.nodes = nodes;
  std::unordered_set<const model::Value*> added;
  for (const auto& n : nodes)
    for (const auto& in : n->inputs)
      if (in && in->is_constant() && added.insert(in.get()).second) mini.initializers.push_back(in);
  mini.outputs = wanted;
  const model::Model model = mini.to_model();
  runtime::Session session = runtime::Session::create(model.proto(), {}, g.base_dir).value();
  runtime::RunOptions run;
  for (const auto& v : wanted) run.outputs.push_back(v->name);
  return session.run({}, run);
}

// Evaluates every node whose inputs are all constant. Returns the number of values folded.
size_t fold_computed(model::Graph& g, const FoldOptions& options) {
  std::unordered_set<const model::Value*> foldable_values;
  std::vector<model::NodePtr> foldable;
  for (const auto& node : g.nodes) {
    if (!node->domain.empty() || !node->subgraphs.empty() || unfoldable_ops().count(node->op_type)) continue;
    const bool all_constant = std::all_of(node->inputs.begin(), node->inputs.end(), [&](const model::ValuePtr& in) {
      return !in || is_constant_value(g, in) || foldable_values.count(in.get());
    });
    if (!all_constant) continue;
    // Results known to be too big are never computed: a weight of gigabytes stays on disk.
    if (std::any_of(node->outputs.begin(), node->outputs.end(),
                    [&](const model::ValuePtr& out) { return out && static_bytes_above(*out, options.size_threshold); })) {
      logger().verbose("not folding ", node->label(), ": its result is larger than the size threshold");
      continue;
    }
    foldable.push_back(node);
    for (const auto& out : node->outputs)
      if (out) foldable_values.insert(out.get());
  }
  if (foldable.empty()) return 0;
  // Values the rest of the graph needs from the foldable part.
  std::unordered_set<const model::Node*> foldable_set;
  for (const auto& n : foldable) foldable_set.insert(n.get());
  std::vector<model::ValuePtr> wanted;
  std::unordered_set<const model::Value*> wanted_set;
  auto want = [&](const model::ValuePtr& v) {
    if (v && foldable_values.count(v.get()) && wanted_set.insert(v.get()).second) wanted.push_back(v);
  };
  for (const auto& node : g.nodes) {
    if (foldable_set.count(node.get())) continue;
    for (const auto& in : node->inputs) want(in);
    for (const auto& [_, sub] : node->subgraphs)
      for (const auto& ref : sub->outer_references()) want(ref);
  }
  for (const auto& out : g.outputs) want(out);
  if (wanted.empty()) return 0;

  TensorMap values;
  try {
    values = evaluate(g, foldable, wanted);
  } catch (const Error& e) {
    // One node the runtime cannot evaluate should not stop the rest: fold node by node.
    logger().verbose("folding all constant subgraphs at once failed (", e.what(), "); trying node by node");
    for (const auto& node : foldable) {
      const bool ready = std::all_of(node->inputs.begin(), node->inputs.end(),
                                     [&](const model::ValuePtr& in) { return !in || is_constant_value(g, in); });
      if (!ready) continue;
      std::vector<model::ValuePtr> outs;
      for (const auto& o : node->outputs)
        if (o) outs.push_back(o);
      try {
        const TensorMap one = evaluate(g, {node}, outs);
        for (const auto& o : outs)
          if (const Tensor* t = one.find(o->name)) {
            o->set_values(t->clone());
          }
      } catch (const Error& node_error) {
        logger().warning("could not fold ", node->label(), ": ", node_error.what());
      }
    }
    for (const auto& v : wanted)
      if (v->is_constant()) values.set(v->name, v->values());
  }
  size_t folded = 0;
  for (const auto& v : wanted) {
    const Tensor* t = values.find(v->name);
    if (!t) continue;
    if (t->size_bytes() > options.size_threshold) {
      if (v->is_constant()) v->to_variable();
      logger().verbose("not folding '", v->name, "' (", t->size_bytes(), " bytes, above the size threshold)");
      continue;
    }
    v->set_values(t->clone());
    add_initializer(g, v);
    ++folded;
  }
  // Nodes whose outputs are all constants now (or unused) go; cleanup drops the rest.
  std::erase_if(g.nodes, [&](const model::NodePtr& node) {
    if (!foldable_set.count(node.get())) return false;
    return std::all_of(node->outputs.begin(), node->outputs.end(),
                       [](const model::ValuePtr& o) { return !o || o->is_constant(); });
  });
  // Values folded along the way (node by node) that kept nodes still read become initializers.
  for (const auto& node : g.nodes)
    for (const auto& in : node->inputs)
      if (is_constant_value(g, in)) add_initializer(g, in);
  g.cleanup(false, true);
  return folded;
}

}  // namespace

void override_input_shapes(model::Graph& graph, const std::map<std::string, DimShape>& shapes) {
  for (const auto& entry : shapes) {
    // A reference, not a structured binding: clang 14 (the sanitizer build) cannot capture those.
    const std::string& name = entry.first;
    const DimShape& shape = entry.second;
    auto it = std::find_if(graph.inputs.begin(), graph.inputs.end(), [&](const auto& v) { return v->name == name; });
    if (it == graph.inputs.end() && graph.find_tensor(name)) {
      logger().warning("--override-input-shapes: '", name, "' is not a graph input; its shape is left as it is");
      continue;
    }
    if (it == graph.inputs.end()) {
      std::vector<std::string> names;
      for (const auto& v : graph.inputs) names.push_back(v->name);
      const auto close = model::near_matches(name, names);
      fail(ErrorCode::kNotFound, "--override-input-shapes: '", name, "' is not a graph input",
           close.empty() ? "" : "; did you mean '" + join_names(close, "', '") + "'?",
           " (inputs: ", join_names(names), ")");
    }
    (*it)->shape = shape;
  }
}

void reshape_inputs(model::Graph& graph, const std::map<std::string, DimShape>& shapes) {
  override_input_shapes(graph, shapes);
  for (const auto& n : graph.nodes)
    for (const auto& o : n->outputs)
      if (o) o->shape = model::Value::unknown_shape();
  graph.value_info.clear();
}

std::shared_ptr<model::Graph> fold_constants(const model::Model& model, const FoldOptions& options, FoldReport* report,
                                          const std::map<std::string, DimShape>& input_shapes) {
  FoldReport local;
  FoldReport& r = report ? *report : local;
  std::shared_ptr<model::Graph> g = model::Graph::from_model(model);
  r.nodes_before = g->node_count(false);
  if (!input_shapes.empty()) reshape_inputs(*g, input_shapes);
  const int max_passes = options.num_passes > 0 ? options.num_passes : 64;
  for (int pass = 0; pass < max_passes; ++pass) {
    logger().verbose("Folding Constants | Pass ", pass + 1);
    if (pass == 0 || options.per_pass_shape_inference) g = model::transforms::graph_with_inferred_types(g->to_model());
    size_t changed = lower_constant_nodes(*g);
    r.constant_nodes += changed;
    if (options.fold_shapes) {
      const size_t shapes = fold_shape_nodes(*g);
      r.shape_nodes += shapes;
      changed += shapes;
    }
    const size_t computed = fold_computed(*g, options);
    r.evaluated += computed;
    changed += computed;
    ++r.passes;
    g->cleanup(false, true);
    if (changed == 0) break;
  }
  r.nodes_after = g->node_count(false);
  return g;
}

}  // namespace parity::tools
