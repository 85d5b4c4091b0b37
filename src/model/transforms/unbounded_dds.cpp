#include "model/transforms/unbounded_dds.h"

#include <algorithm>
#include <set>

#include "core/logger.h"
#include "core/text.h"

namespace parity::model::transforms {

namespace {

// The input of each op whose run-time value sets the output's size.
std::optional<size_t> size_input(const Node& node) {
  if (!node.domain.empty() && node.domain != "ai.onnx") return std::nullopt;
  if (node.op_type == "Range" || node.op_type == "Pad" || node.op_type == "Tile" || node.op_type == "Expand") return 1;
  if (node.op_type == "Resize") return 3;
  return std::nullopt;
}

// True when some output has a dynamic dimension not seen before (anonymous ones are always new).
bool introduces_dynamic_dim(const Node& node, std::set<std::string>& seen_symbols) {
  bool introduced = false;
  for (const auto& out : node.outputs) {
    if (!out) continue;
    if (out->shape.unknown_rank) {
      introduced = true;
      continue;
    }
    for (const auto& d : out->shape.dims) {
      if (d.value >= 0) continue;
      if (d.symbol.empty() || seen_symbols.insert(d.symbol).second) introduced = true;
    }
  }
  return introduced;
}

Tensor bound_values(const Value& tensor, int64_t bound) {
  const bool ranked = !tensor.shape.unknown_rank && !tensor.shape.dims.empty();
  const Shape shape = ranked ? Shape{1} : Shape{};
  switch (tensor.dtype) {
    case DType::kUndefined:
    case DType::kInt64: return Tensor::from_vector<int64_t>(shape, {bound});
    case DType::kInt32: return Tensor::from_vector<int32_t>(shape, {static_cast<int32_t>(bound)});
    case DType::kFloat32: return Tensor::from_vector<float>(shape, {static_cast<float>(bound)});
    case DType::kFloat64: return Tensor::from_vector<double>(shape, {static_cast<double>(bound)});
    default:
      fail(ErrorCode::kInvalidArgument, "cannot bound tensor '", tensor.name, "' of dtype ", dtype_name(tensor.dtype),
                  ": Min bounds int32, int64, float32 and float64 tensors");
  }
}

std::string unused_name(const Graph& graph, const std::string& base) {
  const auto all = graph.tensors(/*recurse=*/true);
  std::string name = base;
  for (int n = 1; all.count(name); ++n) name = base + "_" + std::to_string(n);
  return name;
}

}  // namespace

std::vector<ValuePtr> find_unbounded_dds(const Graph& graph) {
  std::set<std::string> seen_symbols;
  for (const auto& in : graph.inputs)
    if (in && !in->shape.unknown_rank)
      for (const auto& d : in->shape.dims)
        if (!d.symbol.empty()) seen_symbols.insert(d.symbol);
  const auto producers = graph.producers();
  std::vector<ValuePtr> found;
  std::set<const Value*> listed;
  for (const auto& node : graph.nodes) {
    if (!introduces_dynamic_dim(*node, seen_symbols)) continue;
    const auto index = size_input(*node);
    if (!index || *index >= node->inputs.size() || !node->inputs[*index]) continue;
    const ValuePtr& size = node->inputs[*index];
    if (size->is_constant()) continue;
    const auto producer = producers.find(size.get());
    if (producer == producers.end()) continue;  // a graph input: its range is the user's to set
    if (producer->second->op_type == "Min" || producer->second->op_type == "Constant") continue;
    if (listed.insert(size.get()).second) found.push_back(size);
  }
  return found;
}

UpperBounds parse_upper_bounds(const std::vector<std::string>& items, const std::string& option) {
  UpperBounds bounds;
  for (const auto& item : items) {
    const size_t colon = item.rfind(':');
    const std::string name = colon == std::string::npos ? std::string() : item.substr(0, colon);
    const std::string number = colon == std::string::npos ? item : item.substr(colon + 1);
    const int64_t bound = parse_int(number, option + " '" + item + "'");
    PARITY_CHECK(bound >= 0, kInvalidArgument, option, ": the bound of '", item, "' must not be negative");
    if (name.empty()) {
      PARITY_CHECK(!bounds.all, kInvalidArgument, option, ": two bounds without a tensor name ('", *bounds.all,
                   "' and '", item, "'); give at most one default");
      bounds.all = bound;
    } else {
      bounds.by_tensor[name] = bound;
    }
  }
  return bounds;
}

std::map<std::string, int64_t> set_upper_bounds(Graph& graph, const UpperBounds& bounds) {
  std::vector<ValuePtr> targets;
  std::set<std::string> target_names;
  for (const auto& t : find_unbounded_dds(graph))
    if (bounds.all || bounds.by_tensor.count(t->name)) {
      targets.push_back(t);
      target_names.insert(t->name);
    }
  for (const auto& [name, _] : bounds.by_tensor) {
    if (target_names.count(name)) continue;
    ValuePtr t = graph.tensor(name);  // kNotFound with near matches
    logger().warning("--set-unbounded-dds-upper-bound: '", name, "' has no unbounded data-dependent shape; bounding it anyway");
    targets.push_back(t);
    target_names.insert(name);
  }

  std::map<std::string, int64_t> applied;
  for (const auto& tensor : targets) {
    const auto it = bounds.by_tensor.find(tensor->name);
    const int64_t bound = it != bounds.by_tensor.end() ? it->second : *bounds.all;
    const auto producers = graph.producers();
    const auto producer = producers.find(tensor.get());
    PARITY_CHECK(producer != producers.end() && tensor->is_variable(), kInvalidArgument, "cannot bound '",
                 tensor->name, "': it is a graph input or a constant, not a node's output");
    Node* source = producer->second;
    auto copy = Value::variable(unused_name(graph, tensor->name + "_copy"), tensor->dtype, tensor->shape);
    std::replace(source->outputs.begin(), source->outputs.end(), tensor, copy);
    auto limit = Value::constant(unused_name(graph, tensor->name + "_upper_bound"), bound_values(*tensor, bound));
    auto min = std::make_shared<Node>("Min", std::vector<ValuePtr>{copy, limit}, std::vector<ValuePtr>{tensor},
                                      unused_name(graph, tensor->name + "_min"));
    const auto at = std::find_if(graph.nodes.begin(), graph.nodes.end(), [&](const NodePtr& n) { return n.get() == source; });
    graph.nodes.insert(at + 1, min);
    applied[tensor->name] = bound;
  }
  return applied;
}

}  // namespace parity::model::transforms
