#include "model/graph.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <unordered_set>

#include "core/low_precision.h"
#include "core/topological_order.h"
#include "model/external_data.h"
#include "model/proto_convert.h"

namespace parity::model {

namespace fs = std::filesystem;

// --- Value -------------------------------------------------------------------------------------

namespace {

/// Storage over a TensorProto's raw_data: constants with inline weights are used in place, without
/// a copy. The proto is private to the IR, so writes through the tensor are the user's edits.
class ProtoRawStorage : public Storage {
 public:
  explicit ProtoRawStorage(std::shared_ptr<const onnx::TensorProto> proto) : proto_(std::move(proto)) {}
  std::byte* data() override {
    return reinterpret_cast<std::byte*>(const_cast<char*>(proto_->raw_data().data()));
  }
  size_t size_bytes() const override { return proto_->raw_data().size(); }

 private:
  std::shared_ptr<const onnx::TensorProto> proto_;
};

int64_t dims_bytes(const onnx::TensorProto& t) {
  const auto dtype = static_cast<DType>(t.data_type());
  if (!is_valid_dtype(dtype)) return 0;
  if (dtype == DType::kString) return 0;
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= std::max<int64_t>(d, 0);
  return static_cast<int64_t>(packed_size_bytes(dtype, n));  // int4/int2/float4 are stored packed
}

}  // namespace

Value::Value(std::string name_, DType dtype_, DimShape shape_)
    : name(std::move(name_)), dtype(dtype_), shape(std::move(shape_)) {}
Value::~Value() = default;

std::shared_ptr<Value> Value::constant(std::string name, Tensor values) {
  auto v = std::make_shared<Value>(std::move(name));
  v->set_values(std::move(values));
  return v;
}

std::shared_ptr<Value> Value::variable(std::string name, DType dtype, DimShape shape) {
  return std::make_shared<Value>(std::move(name), dtype, std::move(shape));
}

const Tensor& Value::values() const {
  PARITY_CHECK(constant_, kInvalidArgument, "tensor '", name, "' is a variable; it has no constant values");
  if (!loaded_) {
    PARITY_ASSERT(source_tensor_, "constant '", name, "' has neither values nor a source tensor");
    const auto& proto = *source_tensor_;
    const auto proto_dtype = static_cast<DType>(proto.data_type());
    if (!model::has_external_data(proto) && proto.has_raw_data() && is_valid_dtype(proto_dtype) &&
        proto_dtype != DType::kString && !is_sub_byte(proto_dtype) && static_cast<int64_t>(proto.raw_data().size()) == dims_bytes(proto) &&
        !proto.raw_data().empty()) {
      values_ = Tensor(proto_dtype, Shape(proto.dims().begin(), proto.dims().end()),
                       std::make_shared<ProtoRawStorage>(source_tensor_));
    } else {
      values_ = model::tensor_from_proto(proto, base_dir_);
    }
    loaded_ = true;
  }
  return values_;
}

void Value::set_values(Tensor values) {
  constant_ = true;
  dtype = values.dtype();
  shape = DimShape(values.shape());
  values_ = std::move(values);
  loaded_ = true;
  source_tensor_.reset();
}

void Value::to_variable() {
  constant_ = false;
  values_ = Tensor();
  loaded_ = false;
  source_tensor_.reset();
}

size_t Value::constant_bytes() const {
  if (!constant_) return 0;
  if (loaded_) return values_.dtype() == DType::kString ? 0 : values_.size_bytes();
  return source_tensor_ ? static_cast<size_t>(dims_bytes(*source_tensor_)) : 0;
}

bool Value::is_external() const {
  return constant_ && source_tensor_ && model::has_external_data(*source_tensor_);
}

// --- Node --------------------------------------------------------------------------------------

Node::Node(std::string op_type_, std::vector<ValuePtr> inputs_, std::vector<ValuePtr> outputs_, std::string name_)
    : name(std::move(name_)), op_type(std::move(op_type_)), inputs(std::move(inputs_)), outputs(std::move(outputs_)) {}
Node::~Node() = default;

std::string Node::label() const {
  if (name.empty()) return "<unnamed " + op_type + " node>";
  return "'" + name + "' (" + op_type + ")";
}

std::vector<std::string> Node::attribute_order() const {
  std::vector<std::string> order;
  std::set<std::string> listed;
  if (source_)
    for (const auto& a : source_->attribute())
      if ((attrs.count(a.name()) || subgraphs.count(a.name())) && listed.insert(a.name()).second)
        order.push_back(a.name());
  for (const auto& n : added_attribute_order)
    if ((attrs.count(n) || subgraphs.count(n)) && listed.insert(n).second) order.push_back(n);
  for (const auto& [n, _] : attrs)
    if (listed.insert(n).second) order.push_back(n);
  for (const auto& [n, _] : subgraphs)
    if (listed.insert(n).second) order.push_back(n);
  return order;
}

// --- Graph basics ------------------------------------------------------------------------------

Graph::Graph() = default;
Graph::~Graph() = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;

int64_t Graph::opset(const std::string& domain) const {
  const std::string want = model::normalize_domain(domain);
  for (const auto& [d, v] : model.opset_imports)
    if (model::normalize_domain(d) == want) return v;
  return 0;
}

size_t Graph::node_count(bool recurse) const {
  size_t n = nodes.size();
  if (recurse)
    for (const auto& node : nodes)
      for (const auto& [_, sub] : node->subgraphs) n += sub->node_count(true);
  return n;
}

std::vector<ValuePtr> Graph::outer_references() const {
  std::unordered_set<const Value*> defined;
  for (const auto& v : inputs) defined.insert(v.get());
  for (const auto& v : initializers) defined.insert(v.get());
  for (const auto& n : nodes)
    for (const auto& v : n->outputs)
      if (v) defined.insert(v.get());
  std::vector<ValuePtr> refs;
  std::unordered_set<const Value*> seen;
  auto consider = [&](const ValuePtr& v) {
    if (v && !defined.count(v.get()) && seen.insert(v.get()).second) refs.push_back(v);
  };
  for (const auto& n : nodes) {
    for (const auto& v : n->inputs) consider(v);
    for (const auto& [_, sub] : n->subgraphs)
      for (const auto& v : sub->outer_references()) consider(v);
  }
  for (const auto& v : outputs) consider(v);
  return refs;
}

std::unordered_map<const Value*, Node*> Graph::producers() const {
  std::unordered_map<const Value*, Node*> map;
  for (const auto& n : nodes)
    for (const auto& v : n->outputs)
      if (v) map.emplace(v.get(), n.get());
  return map;
}

std::unordered_map<const Value*, std::vector<Node*>> Graph::consumers() const {
  std::unordered_map<const Value*, std::vector<Node*>> map;
  for (const auto& n : nodes) {
    std::unordered_set<const Value*> seen;
    auto add = [&](const ValuePtr& v) {
      if (v && seen.insert(v.get()).second) map[v.get()].push_back(n.get());
    };
    for (const auto& v : n->inputs) add(v);
    for (const auto& [_, sub] : n->subgraphs)
      for (const auto& v : sub->outer_references()) add(v);
  }
  return map;
}

std::map<std::string, ValuePtr> Graph::tensors(bool recurse) const {
  std::map<std::string, ValuePtr> out;
  auto add = [&](const ValuePtr& v) {
    if (v) out.emplace(v->name, v);
  };
  for (const auto& v : inputs) add(v);
  for (const auto& v : initializers) add(v);
  for (const auto& n : nodes) {
    for (const auto& v : n->inputs) add(v);
    for (const auto& v : n->outputs) add(v);
    if (recurse)
      for (const auto& [_, sub] : n->subgraphs)
        for (const auto& [name, v] : sub->tensors(true)) out.emplace(name, v);
  }
  for (const auto& v : outputs) add(v);
  for (const auto& v : value_info) add(v);
  return out;
}

ValuePtr Graph::find_tensor(const std::string& wanted) const {
  auto match = [&](const std::vector<ValuePtr>& list) -> ValuePtr {
    for (const auto& v : list)
      if (v && v->name == wanted) return v;
    return nullptr;
  };
  if (auto v = match(inputs)) return v;
  if (auto v = match(initializers)) return v;
  for (const auto& n : nodes) {
    if (auto v = match(n->outputs)) return v;
    if (auto v = match(n->inputs)) return v;
  }
  if (auto v = match(outputs)) return v;
  return match(value_info);
}

ValuePtr Graph::tensor(const std::string& wanted) const {
  if (auto v = find_tensor(wanted)) return v;
  std::vector<std::string> names;
  for (const auto& [n, _] : tensors(false)) names.push_back(n);
  const auto close = near_matches(wanted, names);
  std::string hint = close.empty() ? std::string() : "; did you mean " + ("'" + join_names(close, "', '") + "'") + "?";
  fail(ErrorCode::kNotFound, "no tensor named '", wanted, "' in graph '", name, "'", hint);
}

std::vector<std::string> near_matches(const std::string& name, const std::vector<std::string>& candidates,
                                      size_t limit) {
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= b.size(); ++j)
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      std::swap(prev, cur);
    }
    return prev[b.size()];
  };
  const size_t max_distance = std::max<size_t>(2, name.size() / 3);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto& c : candidates) {
    const size_t d = distance(name, c);
    const bool contains = !name.empty() && c.find(name) != std::string::npos;
    if (d <= max_distance || contains) scored.emplace_back(contains ? std::min(d, max_distance) : d, c);
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && out.size() < limit; ++i) out.push_back(scored[i].second);
  return out;
}

// --- toposort / cleanup ------------------------------------------------------------------------

namespace {

/// Stable Kahn sort of a graph's nodes. Returns the order; when nodes are left over, `cycle` gets
/// the indices of one cycle among them (producer before consumer).
std::vector<size_t> sort_nodes(const Graph& g, std::vector<size_t>* cycle) {
  const auto& nodes = g.nodes;
  const size_t n = nodes.size();
  std::unordered_map<const Value*, size_t> producer_index;
  for (size_t i = 0; i < n; ++i)
    for (const auto& v : nodes[i]->outputs)
      if (v) producer_index.emplace(v.get(), i);
  std::vector<std::vector<size_t>> deps(n);
  for (size_t i = 0; i < n; ++i) {
    std::set<size_t> d;
    auto add = [&](const ValuePtr& v) {
      if (!v) return;
      auto it = producer_index.find(v.get());
      if (it != producer_index.end()) d.insert(it->second);
    };
    for (const auto& v : nodes[i]->inputs) add(v);
    for (const auto& [_, sub] : nodes[i]->subgraphs)
      for (const auto& v : sub->outer_references()) add(v);
    deps[i].assign(d.begin(), d.end());
  }
  const std::vector<size_t> order = stable_topological_order(deps);
  std::vector<bool> done(n, false);
  for (size_t i : order) done[i] = true;
  if (order.size() != n && cycle) {
    // Every unsorted node waits on another unsorted node: walking producers must revisit one.
    size_t cur = 0;
    while (done[cur]) ++cur;
    std::vector<size_t> path;
    std::vector<int> position(n, -1);
    while (position[cur] < 0) {
      position[cur] = static_cast<int>(path.size());
      path.push_back(cur);
      size_t next = cur;
      for (size_t p : deps[cur])
        if (!done[p]) {
          next = p;
          break;
        }
      cur = next;
    }
    cycle->assign(path.begin() + position[cur], path.end());
    std::reverse(cycle->begin(), cycle->end());
  }
  return order;
}

}  // namespace

std::vector<NodePtr> Graph::find_cycle() const {
  std::vector<size_t> cycle;
  sort_nodes(*this, &cycle);
  std::vector<NodePtr> out;
  for (size_t i : cycle) out.push_back(nodes[i]);
  return out;
}

void Graph::toposort() {
  std::vector<size_t> cycle;
  const std::vector<size_t> order = sort_nodes(*this, &cycle);
  if (!cycle.empty()) {
    std::string text;
    for (size_t i : cycle) text += nodes[i]->label() + " -> ";
    text += nodes[cycle.front()]->label();
    fail(ErrorCode::kInvalidModel, "graph '", name, "' has a cycle: ", text);
  }
  std::vector<NodePtr> sorted;
  sorted.reserve(order.size());
  for (size_t i : order) sorted.push_back(nodes[i]);
  nodes = std::move(sorted);
  for (const auto& node : nodes)
    for (const auto& [_, sub] : node->subgraphs) sub->toposort();
}

void Graph::cleanup(bool remove_unused_inputs, bool recurse) {
  if (recurse)
    for (const auto& node : nodes)
      for (const auto& [_, sub] : node->subgraphs) sub->cleanup(false, true);

  const auto producer = producers();
  std::unordered_set<const Node*> alive;
  std::unordered_set<const Value*> used;
  std::vector<const Value*> work;
  for (const auto& v : outputs)
    if (v) work.push_back(v.get());
  while (!work.empty()) {
    const Value* v = work.back();
    work.pop_back();
    if (!used.insert(v).second) continue;
    auto it = producer.find(v);
    if (it == producer.end() || !alive.insert(it->second).second) continue;
    for (const auto& in : it->second->inputs)
      if (in) work.push_back(in.get());
    for (const auto& [_, sub] : it->second->subgraphs)
      for (const auto& ref : sub->outer_references()) work.push_back(ref.get());
  }
  std::unordered_set<const Value*> defined_by_alive;
  std::vector<NodePtr> kept;
  for (const auto& node : nodes)
    if (alive.count(node.get())) {
      kept.push_back(node);
      for (const auto& v : node->outputs)
        if (v) defined_by_alive.insert(v.get());
    }
  nodes = std::move(kept);
  std::erase_if(initializers, [&](const ValuePtr& v) { return !used.count(v.get()); });
  if (remove_unused_inputs) std::erase_if(inputs, [&](const ValuePtr& v) { return !used.count(v.get()); });
  std::erase_if(value_info, [&](const ValuePtr& v) {
    return !used.count(v.get()) && !defined_by_alive.count(v.get());
  });
}

// --- import / export ---------------------------------------------------------------------------

namespace {

/// Names visible in a graph: its own, then its enclosing graphs'.
struct Scope {
  const Scope* parent = nullptr;
  std::unordered_map<std::string, ValuePtr> names;
  ValuePtr find(const std::string& name) const {
    for (const Scope* s = this; s; s = s->parent) {
      auto it = s->names.find(name);
      if (it != s->names.end()) return it->second;
    }
    return nullptr;
  }
};

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

bool tensors_equal(const Tensor& a, const Tensor& b) {
  if (a.defined() != b.defined()) return false;
  return !a.defined() || a.bit_equal(b);
}

bool attributes_equal(const Attribute& a, const Attribute& b) {
  if (a.name != b.name || a.type != b.type || !same_bits(a.f, b.f) || a.i != b.i || a.s != b.s ||
      a.ints != b.ints || a.strings != b.strings || a.ref_attr_name != b.ref_attr_name ||
      a.doc_string != b.doc_string || a.floats.size() != b.floats.size() || a.tensors.size() != b.tensors.size() ||
      a.graphs.size() != b.graphs.size() || !tensors_equal(a.t, b.t))
    return false;
  for (size_t i = 0; i < a.floats.size(); ++i)
    if (!same_bits(a.floats[i], b.floats[i])) return false;
  for (size_t i = 0; i < a.tensors.size(); ++i)
    if (!tensors_equal(a.tensors[i], b.tensors[i])) return false;
  for (size_t i = 0; i < a.graphs.size(); ++i)
    if (a.graphs[i] != b.graphs[i] && (!a.graphs[i] || !b.graphs[i] ||
                                       a.graphs[i]->SerializeAsString() != b.graphs[i]->SerializeAsString()))
      return false;
  return true;
}

void write_type(const Value& v, onnx::ValueInfoProto* info) {
  info->set_name(v.name);
  if (!v.doc_string.empty()) info->set_doc_string(v.doc_string);
  if (!v.has_type()) return;
  auto* tt = info->mutable_type()->mutable_tensor_type();
  if (v.dtype != DType::kUndefined) tt->set_elem_type(static_cast<int>(v.dtype));
  if (v.shape.unknown_rank) return;
  auto* shape = tt->mutable_shape();
  for (const auto& d : v.shape.dims) {
    auto* dim = shape->add_dim();
    if (d.is_static()) dim->set_dim_value(d.value);
    else if (!d.symbol.empty()) dim->set_dim_param(d.symbol);
  }
}

}  // namespace

struct GraphIo {
  static void apply_info(Value& v, const onnx::ValueInfoProto& info) {
    if (v.source_info_) return;  // first description wins (inputs, then outputs, then value_info)
    v.source_info_ = std::make_shared<onnx::ValueInfoProto>(info);
    v.doc_string = info.doc_string();
    if (v.is_variable()) {
      TensorMeta meta = model::meta_from_value_info(info);
      v.dtype = meta.dtype;
      v.shape = meta.shape;
    }
  }

  static std::shared_ptr<Graph> read_graph(const onnx::GraphProto& gp, const Scope* outer, const fs::path& base_dir) {
    auto g = std::make_shared<Graph>();
    g->name = gp.name();
    g->doc_string = gp.doc_string();
    g->base_dir = base_dir;
    auto skeleton = std::make_shared<onnx::GraphProto>();
    if (gp.has_name()) skeleton->set_name(gp.name());
    if (gp.has_doc_string()) skeleton->set_doc_string(gp.doc_string());
    *skeleton->mutable_sparse_initializer() = gp.sparse_initializer();
    *skeleton->mutable_quantization_annotation() = gp.quantization_annotation();
    g->source_graph_ = skeleton;

    Scope local;
    local.parent = outer;
    std::vector<ValuePtr> created;
    auto define = [&](const std::string& name) {
      auto it = local.names.find(name);
      if (it != local.names.end()) return it->second;
      auto v = std::make_shared<Value>(name);
      local.names.emplace(name, v);
      created.push_back(v);
      return v;
    };
    auto lookup = [&](const std::string& name) {
      if (auto v = local.find(name)) return v;
      return define(name);
    };

    for (const auto& t : gp.initializer()) {
      auto v = std::make_shared<Value>(t.name(), static_cast<DType>(t.data_type()),
                                       DimShape(Shape(t.dims().begin(), t.dims().end())));
      v->constant_ = true;
      v->source_tensor_ = std::make_shared<onnx::TensorProto>(t);
      v->base_dir_ = base_dir;
      local.names.emplace(t.name(), v);  // a duplicate initializer keeps its own Value
      created.push_back(v);
      g->initializers.push_back(v);
    }
    for (const auto& info : gp.input()) {
      auto v = define(info.name());
      apply_info(*v, info);
      g->inputs.push_back(v);
    }

    struct PendingSubgraph {
      Node* node;
      std::string attr;
      const onnx::GraphProto* proto;
    };
    std::vector<PendingSubgraph> pending;
    for (const auto& np : gp.node()) {
      auto node = std::make_shared<Node>();
      node->name = np.name();
      node->op_type = np.op_type();
      node->domain = np.domain();
      node->doc_string = np.doc_string();
      for (const auto& in : np.input()) node->inputs.push_back(in.empty() ? nullptr : lookup(in));
      for (const auto& out : np.output()) node->outputs.push_back(out.empty() ? nullptr : define(out));
      auto source = std::make_shared<onnx::NodeProto>(np);
      source->clear_input();
      source->clear_output();
      for (auto& attr : *source->mutable_attribute()) {
        if (attr.has_g()) {
          pending.push_back({node.get(), attr.name(), nullptr});
          attr.clear_g();
        }
      }
      for (const auto& attr : np.attribute()) {
        Attribute a = model::attribute_from_proto(attr, base_dir);
        if (attr.has_g()) {
          a.g.reset();
          for (auto& p : pending)
            if (p.node == node.get() && p.attr == attr.name()) p.proto = &attr.g();
        }
        node->attrs[a.name] = std::move(a);
      }
      node->source_ = source;
      g->nodes.push_back(node);
    }
    for (const auto& info : gp.output()) {
      auto v = lookup(info.name());
      apply_info(*v, info);
      g->outputs.push_back(v);
    }
    for (const auto& info : gp.value_info()) {
      auto v = define(info.name());
      apply_info(*v, info);
      g->value_info.push_back(v);
    }
    for (const auto& p : pending)
      p.node->subgraphs[p.attr] = read_graph(*p.proto, &local, base_dir);

    for (const auto& v : created) {
      v->source_dtype_ = v->dtype;
      v->source_shape_ = v->shape;
    }
    return g;
  }

  static void write_info(const Value& v, onnx::ValueInfoProto* info) {
    if (v.source_info_ && v.dtype == v.source_dtype_ && v.shape == v.source_shape_) {
      *info = *v.source_info_;
      if (info->name() != v.name) info->set_name(v.name);
      if (info->doc_string() != v.doc_string) info->set_doc_string(v.doc_string);
      return;
    }
    write_type(v, info);
  }

  static void write_constant(const Value& v, onnx::TensorProto* t) {
    if (v.source_tensor_) {
      *t = *v.source_tensor_;
      if (t->name() != v.name) t->set_name(v.name);
      return;
    }
    model::tensor_to_proto(v.values(), t, v.name);
  }

  static void write_node(const Node& node, onnx::NodeProto* np, const std::unordered_set<const Value*>& visible) {
    std::vector<const onnx::AttributeProto*> source_attrs;
    if (node.source_) {
      *np = *node.source_;
      np->clear_attribute();
      for (const auto& a : node.source_->attribute()) source_attrs.push_back(&a);
    }
    if (np->name() != node.name) np->set_name(node.name);
    if (np->op_type() != node.op_type) np->set_op_type(node.op_type);
    if (np->domain() != node.domain) np->set_domain(node.domain);
    if (np->doc_string() != node.doc_string) np->set_doc_string(node.doc_string);
    for (const auto& v : node.inputs) np->add_input(v ? v->name : std::string());
    for (const auto& v : node.outputs) np->add_output(v ? v->name : std::string());

    for (const auto& attr_name : node.attribute_order()) {
      const onnx::AttributeProto* source = nullptr;
      for (const auto* a : source_attrs)
        if (a->name() == attr_name) source = a;
      auto* out = np->add_attribute();
      auto sub = node.subgraphs.find(attr_name);
      if (sub != node.subgraphs.end()) {
        if (source) *out = *source;
        else {
          out->set_name(attr_name);
          out->set_type(onnx::AttributeProto::GRAPH);
        }
        write_graph(*sub->second, out->mutable_g(), visible);
        continue;
      }
      const Attribute& current = node.attrs.at(attr_name);
      if (source && attributes_equal(model::attribute_from_proto(*source, {}), current)) {
        *out = *source;
      } else {
        model::attribute_to_proto(current, out);
      }
    }
  }

  static void write_graph(const Graph& g, onnx::GraphProto* gp, const std::unordered_set<const Value*>& outer_visible) {
    if (g.source_graph_) *gp = *g.source_graph_;
    if (gp->name() != g.name) gp->set_name(g.name);
    if (gp->doc_string() != g.doc_string) gp->set_doc_string(g.doc_string);

    std::unordered_set<const Value*> visible = outer_visible;
    std::unordered_set<const Value*> written_constants;
    for (const auto& v : g.initializers) {
      if (!v || !v->is_constant()) continue;
      write_constant(*v, gp->add_initializer());
      written_constants.insert(v.get());
      visible.insert(v.get());
    }
    for (const auto& v : g.inputs) visible.insert(v.get());
    for (const auto& n : g.nodes)
      for (const auto& v : n->outputs)
        if (v) visible.insert(v.get());
    // Constants created by editing (not in the initializer list) are stored in the graph using them.
    auto write_new_constant = [&](const ValuePtr& v) {
      if (v && v->is_constant() && !outer_visible.count(v.get()) && written_constants.insert(v.get()).second) {
        write_constant(*v, gp->add_initializer());
        visible.insert(v.get());
      }
    };
    for (const auto& n : g.nodes)
      for (const auto& v : n->inputs) write_new_constant(v);
    for (const auto& v : g.outputs) write_new_constant(v);

    for (const auto& v : g.inputs) write_info(*v, gp->add_input());
    for (const auto& n : g.nodes) write_node(*n, gp->add_node(), visible);
    for (const auto& v : g.outputs) write_info(*v, gp->add_output());

    std::unordered_set<const Value*> described;
    for (const auto& v : g.inputs) described.insert(v.get());
    for (const auto& v : g.outputs) described.insert(v.get());
    for (const auto& v : g.value_info) {
      write_info(*v, gp->add_value_info());
      described.insert(v.get());
    }
    for (const auto& n : g.nodes)
      for (const auto& v : n->outputs)
        if (v && v->has_type() && described.insert(v.get()).second) write_info(*v, gp->add_value_info());
  }
};

std::shared_ptr<Graph> Graph::from_model(const model::Model& model) {
  const onnx::ModelProto& mp = model.proto();
  auto g = GraphIo::read_graph(mp.graph(), nullptr, model.base_dir());
  g->external_data_ignored = model.external_data_ignored();
  g->model.ir_version = mp.ir_version();
  for (const auto& op : mp.opset_import()) g->model.opset_imports.emplace_back(op.domain(), op.version());
  g->model.producer_name = mp.producer_name();
  g->model.producer_version = mp.producer_version();
  g->model.domain = mp.domain();
  g->model.model_version = mp.model_version();
  g->model.doc_string = mp.doc_string();
  for (const auto& kv : mp.metadata_props()) g->model.metadata_props.emplace_back(kv.key(), kv.value());
  // Everything but the graph, so export can restore fields (and their presence) exactly.
  auto skeleton = std::make_shared<onnx::ModelProto>();
  if (mp.has_ir_version()) skeleton->set_ir_version(mp.ir_version());
  *skeleton->mutable_opset_import() = mp.opset_import();
  if (mp.has_producer_name()) skeleton->set_producer_name(mp.producer_name());
  if (mp.has_producer_version()) skeleton->set_producer_version(mp.producer_version());
  if (mp.has_domain()) skeleton->set_domain(mp.domain());
  if (mp.has_model_version()) skeleton->set_model_version(mp.model_version());
  if (mp.has_doc_string()) skeleton->set_doc_string(mp.doc_string());
  *skeleton->mutable_metadata_props() = mp.metadata_props();
  *skeleton->mutable_training_info() = mp.training_info();
  *skeleton->mutable_functions() = mp.functions();
  g->source_model_ = skeleton;
  return g;
}

model::Model Graph::to_model() const {
  auto mp = std::make_unique<onnx::ModelProto>();
  if (source_model_) *mp = *source_model_;
  const ModelInfo& m = model;
  if (mp->ir_version() != m.ir_version || (!mp->has_ir_version() && m.ir_version)) mp->set_ir_version(m.ir_version);
  std::vector<std::pair<std::string, int64_t>> current;
  for (const auto& op : mp->opset_import()) current.emplace_back(op.domain(), op.version());
  if (current != m.opset_imports) {
    mp->clear_opset_import();
    for (const auto& [d, v] : m.opset_imports) {
      auto* op = mp->add_opset_import();
      op->set_domain(d);
      op->set_version(v);
    }
  }
  if (mp->producer_name() != m.producer_name) mp->set_producer_name(m.producer_name);
  if (mp->producer_version() != m.producer_version) mp->set_producer_version(m.producer_version);
  if (mp->domain() != m.domain) mp->set_domain(m.domain);
  if (mp->model_version() != m.model_version) mp->set_model_version(m.model_version);
  if (mp->doc_string() != m.doc_string) mp->set_doc_string(m.doc_string);
  std::vector<std::pair<std::string, std::string>> props;
  for (const auto& kv : mp->metadata_props()) props.emplace_back(kv.key(), kv.value());
  if (props != m.metadata_props) {
    mp->clear_metadata_props();
    for (const auto& [k, v] : m.metadata_props) {
      auto* kv = mp->add_metadata_props();
      kv->set_key(k);
      kv->set_value(v);
    }
  }
  GraphIo::write_graph(*this, mp->mutable_graph(), {});
  model::Model out(std::move(mp), base_dir);
  out.set_external_data_ignored(external_data_ignored);
  return out;
}

}  // namespace parity::model
