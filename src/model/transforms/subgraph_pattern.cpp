#include "model/transforms/subgraph_pattern.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/text.h"

namespace parity::model::transforms {

namespace {

std::string plain_domain(const std::string& d) { return d == "ai.onnx" ? std::string() : d; }

std::optional<double> number_of(const Attribute& a) {
  if (a.type == AttrType::kInt) return static_cast<double>(a.i);
  if (a.type == AttrType::kFloat) return static_cast<double>(a.f);
  return std::nullopt;
}

bool same_value(const Attribute& a, const Attribute& b) {
  if (auto x = number_of(a), y = number_of(b); x && y) return *x == *y;
  if (a.type != b.type) {
    // A pattern's list of whole numbers may be written for a floats attribute and the other way round.
    auto as_doubles = [](const Attribute& v) {
      std::vector<double> out;
      for (auto i : v.ints) out.push_back(static_cast<double>(i));
      for (auto f : v.floats) out.push_back(f);
      return out;
    };
    const bool lists = (a.type == AttrType::kInts || a.type == AttrType::kFloats) &&
                       (b.type == AttrType::kInts || b.type == AttrType::kFloats);
    return lists && as_doubles(a) == as_doubles(b);
  }
  switch (a.type) {
    case AttrType::kString: return a.s == b.s;
    case AttrType::kInts: return a.ints == b.ints;
    case AttrType::kFloats: return a.floats == b.floats;
    case AttrType::kStrings: return a.strings == b.strings;
    default: return false;
  }
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out = "[";
  for (const auto& n : names) out += (out.size() > 1 ? ", '" : "'") + n + "'";
  return out + "]";
}

bool holds(const AttributeCondition& c, const Node& node) {
  const auto it = node.attrs.find(c.attr);
  if (it == node.attrs.end()) return false;
  if (c.op == "eq") return same_value(it->second, c.value);
  if (c.op == "ne") return !same_value(it->second, c.value);
  const auto x = number_of(it->second), y = number_of(c.value);
  if (!x || !y) return false;
  if (c.op == "lt") return *x < *y;
  if (c.op == "le") return *x <= *y;
  if (c.op == "gt") return *x > *y;
  if (c.op == "ge") return *x >= *y;
  return false;
}

// Backtracking search for every embedding of the pattern's nodes (in topological order).
class Matcher {
 public:
  Matcher(const Graph& graph, const SubgraphPattern& pattern) : graph_(graph), pattern_(pattern) {
    inputs_.insert(pattern.inputs.begin(), pattern.inputs.end());
    outputs_.insert(pattern.outputs.begin(), pattern.outputs.end());
    consumers_ = graph.consumers();
    for (const auto& v : graph.outputs) graph_outputs_.insert(v.get());
    order_ = topological_pattern_order(pattern);
  }

  std::vector<std::vector<const Node*>> all() {
    std::vector<const Node*> chosen(pattern_.nodes.size(), nullptr);
    search(0, chosen);
    return found_;
  }

  const std::map<std::string, const Value*>& binding_of(size_t i) const { return bindings_[i]; }

  static std::vector<size_t> topological_pattern_order(const SubgraphPattern& p) {
    std::map<std::string, size_t> producer;
    for (size_t i = 0; i < p.nodes.size(); ++i)
      for (const auto& o : p.nodes[i].outputs) producer[o] = i;
    std::vector<size_t> order;
    std::vector<int> state(p.nodes.size(), 0);
    std::function<void(size_t)> visit = [&](size_t i) {
      PARITY_CHECK(state[i] != 1, kInvalidArgument, "pattern '", p.name, "' has a cycle through node '",
                   p.nodes[i].name, "'");
      if (state[i] == 2) return;
      state[i] = 1;
      for (const auto& in : p.nodes[i].inputs)
        if (auto it = producer.find(in); it != producer.end()) visit(it->second);
      state[i] = 2;
      order.push_back(i);
    };
    for (size_t i = 0; i < p.nodes.size(); ++i) visit(i);
    return order;
  }

 private:
  void search(size_t k, std::vector<const Node*>& chosen) {
    if (k == order_.size()) {
      if (self_contained(chosen)) {
        found_.push_back(chosen);
        bindings_.push_back(bound_);
      }
      return;
    }
    const PatternNode& p = pattern_.nodes[order_[k]];
    for (const Node* candidate : candidates(p)) {
      if (std::find(chosen.begin(), chosen.end(), candidate) != chosen.end()) continue;
      const auto saved = bound_;
      const auto saved_reverse = reverse_;
      if (bind(p, *candidate)) {
        chosen[order_[k]] = candidate;
        search(k + 1, chosen);
        chosen[order_[k]] = nullptr;
      }
      bound_ = saved;
      reverse_ = saved_reverse;
    }
  }

  std::vector<const Node*> candidates(const PatternNode& p) const {
    std::vector<const Node*> out;
    for (const auto& in : p.inputs)
      if (auto it = bound_.find(in); it != bound_.end()) {
        if (auto c = consumers_.find(it->second); c != consumers_.end())
          for (const Node* n : c->second) out.push_back(n);
        return out;
      }
    for (const auto& n : graph_.nodes) out.push_back(n.get());
    return out;
  }

  bool bind(const PatternNode& p, const Node& n) {
    if (n.op_type != p.op_type || plain_domain(n.domain) != plain_domain(p.domain)) return false;
    if (n.inputs.size() != p.inputs.size() || n.outputs.size() != p.outputs.size()) return false;
    for (const auto& c : p.conditions)
      if (!holds(c, n)) return false;
    auto tie = [&](const std::string& name, const Value* v) {
      if (name.empty() || !v) return name.empty() && !v;
      if (auto it = bound_.find(name); it != bound_.end()) return it->second == v;
      // Pattern inputs may share a graph tensor (x feeding two branches); inner tensors may not.
      if (!inputs_.count(name)) {
        if (reverse_.count(v)) return false;
        reverse_.insert(v);
      }
      bound_[name] = v;
      return true;
    };
    for (size_t i = 0; i < p.inputs.size(); ++i)
      if (!tie(p.inputs[i], n.inputs[i].get())) return false;
    for (size_t i = 0; i < p.outputs.size(); ++i)
      if (!tie(p.outputs[i], n.outputs[i].get())) return false;
    return true;
  }

  // Tensors computed inside and not pattern outputs must not be seen outside the match.
  bool self_contained(const std::vector<const Node*>& chosen) const {
    const std::unordered_set<const Node*> inside(chosen.begin(), chosen.end());
    for (const auto& [name, v] : bound_) {
      if (inputs_.count(name) || outputs_.count(name)) continue;
      if (graph_outputs_.count(v)) return false;
      if (auto c = consumers_.find(v); c != consumers_.end())
        for (const Node* n : c->second)
          if (!inside.count(n)) return false;
    }
    return true;
  }

  const Graph& graph_;
  const SubgraphPattern& pattern_;
  std::set<std::string> inputs_, outputs_;
  std::unordered_map<const Value*, std::vector<Node*>> consumers_;
  std::unordered_set<const Value*> graph_outputs_;
  std::vector<size_t> order_;
  std::map<std::string, const Value*> bound_;
  std::set<const Value*> reverse_;
  std::vector<std::vector<const Node*>> found_;
  std::vector<std::map<std::string, const Value*>> bindings_;
};

}  // namespace

void validate_pattern(const SubgraphPattern& p) {
  const std::string what = "pattern '" + p.name + "'";
  PARITY_CHECK(!p.op_type.empty(), kInvalidArgument, what, " has no 'op' (the op type of the plugin node)");
  PARITY_CHECK(!p.nodes.empty(), kInvalidArgument, what, " has no nodes");
  PARITY_CHECK(!p.outputs.empty(), kInvalidArgument, what, " has no outputs");
  std::set<std::string> produced, node_names;
  const std::set<std::string> inputs(p.inputs.begin(), p.inputs.end());
  for (const auto& n : p.nodes) {
    PARITY_CHECK(!n.op_type.empty(), kInvalidArgument, what, ": node '", n.name, "' has no op");
    PARITY_CHECK(node_names.insert(n.name).second, kInvalidArgument, what, ": two nodes are named '", n.name, "'");
    for (const auto& o : n.outputs) {
      if (o.empty()) continue;
      PARITY_CHECK(!inputs.count(o), kInvalidArgument, what, ": '", o, "' is a pattern input but node '", n.name,
                   "' produces it");
      PARITY_CHECK(produced.insert(o).second, kInvalidArgument, what, ": tensor '", o, "' is produced twice");
    }
    for (const auto& c : n.conditions)
      PARITY_CHECK(std::set<std::string>({"eq", "ne", "lt", "le", "gt", "ge"}).count(c.op), kInvalidArgument, what,
                   ": node '", n.name, "' compares attribute '", c.attr, "' with '", c.op,
                   "'; use eq, ne, lt, le, gt or ge");
  }
  for (const auto& n : p.nodes)
    for (const auto& i : n.inputs)
      PARITY_CHECK(i.empty() || inputs.count(i) || produced.count(i), kInvalidArgument, what, ": node '", n.name,
                   "' reads '", i, "', which is neither a pattern input nor produced by a pattern node");
  for (const auto& o : p.outputs)
    PARITY_CHECK(produced.count(o), kInvalidArgument, what, ": output '", o, "' is not produced by any node");
  for (const auto& a : p.attributes)
    PARITY_CHECK(a.from_node.empty() || node_names.count(a.from_node), kInvalidArgument, what, ": attribute '", a.name,
                 "' copies from node '", a.from_node, "', which the pattern does not have");
  Matcher::topological_pattern_order(p);  // refuses cycles
}

std::vector<PatternMatch> find_pattern_matches(const Graph& graph, const SubgraphPattern& pattern) {
  validate_pattern(pattern);
  Matcher matcher(graph, pattern);
  const auto all = matcher.all();
  std::unordered_map<const Node*, size_t> position;
  for (size_t i = 0; i < graph.nodes.size(); ++i) position[graph.nodes[i].get()] = i;
  std::vector<size_t> order(all.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto first = [&](size_t m) {
    size_t lowest = graph.nodes.size();
    for (const Node* n : all[m]) lowest = std::min(lowest, position[n]);
    return lowest;
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return first(a) < first(b); });

  std::vector<PatternMatch> matches;
  std::unordered_set<const Node*> used;
  for (size_t m : order) {
    if (std::any_of(all[m].begin(), all[m].end(), [&](const Node* n) { return used.count(n); })) continue;
    used.insert(all[m].begin(), all[m].end());
    const auto& binding = matcher.binding_of(m);
    PatternMatch match;
    for (const auto& i : pattern.inputs) match.inputs.push_back(binding.at(i)->name);
    for (const auto& o : pattern.outputs) match.outputs.push_back(binding.at(o)->name);
    for (const Node* n : all[m]) match.nodes.push_back(n->name);
    for (const auto& a : pattern.attributes) {
      if (a.from_node.empty()) {
        match.attributes[a.name] = a.value;
        match.attributes[a.name].name = a.name;
        continue;
      }
      for (size_t i = 0; i < pattern.nodes.size(); ++i)
        if (pattern.nodes[i].name == a.from_node)
          if (auto it = all[m][i]->attrs.find(a.from_attribute); it != all[m][i]->attrs.end()) {
            Attribute copied = it->second;
            copied.name = a.name;
            if (a.scale != 1.0) {
              PARITY_CHECK(copied.type == AttrType::kInt || copied.type == AttrType::kFloat, kInvalidArgument,
                           "plugin attribute '", a.name, "': only a number can be scaled, but ", all[m][i]->label(),
                           "'s '", a.from_attribute, "' is not one");
              if (copied.type == AttrType::kInt) copied.i = std::llround(static_cast<double>(copied.i) * a.scale);
              else copied.f = static_cast<float>(copied.f * a.scale);
            }
            match.attributes[a.name] = std::move(copied);
          }
    }
    matches.push_back(std::move(match));
  }
  return matches;
}

namespace {

std::unordered_set<const Value*> value_set(const std::vector<ValuePtr>& values) {
  std::unordered_set<const Value*> out;
  for (const auto& v : values) out.insert(v.get());
  return out;
}

// The nodes that compute `outputs` back to `inputs`. Reaching a graph input that is not among
// `inputs` is an error (the region would not be closed); constants are fine.
std::unordered_set<const Node*> region_between(const Graph& graph, const std::vector<ValuePtr>& inputs,
                                               const std::vector<ValuePtr>& outputs,
                                               const std::vector<std::string>& input_names,
                                               const std::vector<std::string>& output_names) {
  const auto stop = value_set(inputs);
  const auto producers = graph.producers();
  std::unordered_set<const Node*> region;
  std::unordered_set<const Value*> seen;
  std::vector<const Value*> pending;
  for (const auto& v : outputs) pending.push_back(v.get());
  while (!pending.empty()) {
    const Value* v = pending.back();
    pending.pop_back();
    if (stop.count(v) || !seen.insert(v).second) continue;
    const auto p = producers.find(v);
    if (p == producers.end()) {
      PARITY_CHECK(v->is_constant(), kInvalidArgument, "the subgraph producing ", join_names(output_names),
                   " reads graph input '", v->name, "', which is not among its inputs ", join_names(input_names));
      continue;
    }
    if (!region.insert(p->second).second) continue;
    for (const auto& in : p->second->inputs)
      if (in) pending.push_back(in.get());
  }
  PARITY_CHECK(!region.empty(), kInvalidArgument, "no node lies between ", join_names(input_names), " and ",
               join_names(output_names));
  return region;
}

// Tensors computed inside the region, other than its outputs, must not be seen outside it.
void check_region_closed(const Graph& graph, const std::unordered_set<const Node*>& region,
                         const std::vector<ValuePtr>& outputs) {
  const auto kept = value_set(outputs);
  const auto graph_outputs = value_set(graph.outputs);
  const auto consumers = graph.consumers();
  for (const Node* n : region)
    for (const auto& o : n->outputs) {
      if (!o || kept.count(o.get())) continue;
      PARITY_CHECK(!graph_outputs.count(o.get()), kInvalidArgument, "tensor '", o->name,
                   "' is computed inside the subgraph and is a graph output; list it among the outputs");
      if (auto c = consumers.find(o.get()); c != consumers.end())
        for (const Node* user : c->second)
          PARITY_CHECK(region.count(user), kInvalidArgument, "tensor '", o->name, "' is computed inside the subgraph ",
                       "but node ", user->label(), " outside it reads it; list it among the outputs");
    }
}

}  // namespace

size_t replace_subgraph(Graph& graph, const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                        const std::string& op_type, const std::string& domain, const AttributeMap& attributes,
                        const std::string& node_name) {
  PARITY_CHECK(!outputs.empty(), kInvalidArgument, "a replacement needs at least one output");
  std::vector<ValuePtr> in_values, out_values;
  for (const auto& name : inputs) in_values.push_back(graph.tensor(name));
  for (const auto& name : outputs) out_values.push_back(graph.tensor(name));
  const auto region = region_between(graph, in_values, out_values, inputs, outputs);
  check_region_closed(graph, region, out_values);

  auto node = std::make_shared<Node>(op_type, in_values, out_values, node_name);
  node->domain = domain;
  node->attrs = attributes;
  std::erase_if(graph.nodes, [&](const NodePtr& n) { return region.count(n.get()) > 0; });
  graph.nodes.push_back(node);
  const std::string plain = plain_domain(domain);
  if (!plain.empty() &&
      std::none_of(graph.model.opset_imports.begin(), graph.model.opset_imports.end(),
                   [&](const auto& op) { return plain_domain(op.first) == plain; }))
    graph.model.opset_imports.emplace_back(plain, 1);
  graph.cleanup(/*remove_unused_inputs=*/false, /*recurse=*/false);
  graph.toposort();
  return region.size();
}

}  // namespace parity::model::transforms
