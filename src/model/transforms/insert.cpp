#include "model/transforms/insert.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <set>
#include <unordered_set>

#include "core/logger.h"
#include "core/text.h"
#include "model/transforms/extract.h"
#include "model/schemas/newer_onnx.h"

namespace parity::model::transforms {

namespace {

std::string strip_quotes(const std::string& s) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) return s.substr(1, s.size() - 2);
  return s;
}

bool is_int_text(const std::string& s) {
  if (s.empty()) return false;
  const size_t start = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  return start < s.size() && s.find_first_not_of("0123456789", start) == std::string::npos;
}

bool is_number_text(const std::string& s) {
  if (s.empty()) return false;
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end && *end == '\0';
}

Attribute parse_attribute(const std::string& text, const onnx::OpSchema* schema) {
  const size_t eq = text.find('=');
  PARITY_CHECK(eq != std::string::npos && eq > 0, kInvalidArgument, "--attrs: '", text, "' should be key=value");
  Attribute a;
  a.name = text.substr(0, eq);
  const std::string value = text.substr(eq + 1);
  std::optional<onnx::AttributeProto::AttributeType> declared;
  if (schema) {
    const auto& known = schema->attributes();
    auto it = known.find(a.name);
    if (it == known.end()) {
      std::vector<std::string> names;
      for (const auto& [n, _] : known) names.push_back(n);
      const auto close = model::near_matches(a.name, names);
      fail(ErrorCode::kInvalidArgument, "--attrs: ", schema->Name(), " has no attribute '", a.name, "'",
           close.empty() ? "" : "; did you mean '" + join_names(close, "', '") + "'?",
           names.empty() ? " (it takes none)" : " (attributes: " + join_names(names) + ")");
    }
    declared = it->second.type;
  }
  const bool is_list = !value.empty() && (value.front() == '[' || value.front() == '(');
  if (is_list) {
    const auto items = split_list(value, "--attrs " + a.name);
    const bool all_int = std::all_of(items.begin(), items.end(), is_int_text);
    const bool all_num = std::all_of(items.begin(), items.end(), is_number_text);
    if (declared == onnx::AttributeProto::FLOATS || (!declared && all_num && !all_int)) {
      PARITY_CHECK(all_num, kInvalidArgument, "--attrs ", a.name, ": '", value, "' is not a list of numbers");
      a.type = AttrType::kFloats;
      for (const auto& i : items) a.floats.push_back(std::stof(i));
    } else if (declared == onnx::AttributeProto::INTS || (!declared && all_int)) {
      PARITY_CHECK(all_int, kInvalidArgument, "--attrs ", a.name, ": '", value, "' is not a list of integers");
      a.type = AttrType::kInts;
      for (const auto& i : items) a.ints.push_back(parse_int(i, "--attrs " + a.name));
    } else {
      a.type = AttrType::kStrings;
      for (const auto& i : items) a.strings.push_back(strip_quotes(i));
    }
  } else if (declared == onnx::AttributeProto::FLOAT || (!declared && is_number_text(value) && !is_int_text(value))) {
    PARITY_CHECK(is_number_text(value), kInvalidArgument, "--attrs ", a.name, ": '", value, "' is not a number");
    a.type = AttrType::kFloat;
    a.f = std::stof(value);
  } else if (declared == onnx::AttributeProto::INT || (!declared && is_int_text(value))) {
    PARITY_CHECK(is_int_text(value), kInvalidArgument, "--attrs ", a.name, ": '", value, "' is not an integer");
    a.type = AttrType::kInt;
    a.i = parse_int(value, "--attrs " + a.name);
  } else if (!declared || declared == onnx::AttributeProto::STRING) {
    a.type = AttrType::kString;
    a.s = strip_quotes(value);
  } else {
    fail(ErrorCode::kUnsupported, "--attrs ", a.name, ": attributes of this type cannot be given on the command line");
  }
  return a;
}

// Suffix of the tensor a node inserted at a single tensor produces (Polygraphy's spelling).
constexpr const char* kInsertedSuffix = "_polygraphy_surgeon_insert_output";

void replace_uses(model::Graph& g, const model::ValuePtr& from, const model::ValuePtr& to) {
  for (const auto& node : g.nodes) {
    for (auto& in : node->inputs)
      if (in == from) in = to;
    for (const auto& [_, sub] : node->subgraphs) replace_uses(*sub, from, to);
  }
}

// The node reads tensor v and takes over its readers: they read the new tensor it returns. A graph
// output keeps its name on the new tensor (the old one is renamed), as Polygraphy does.
model::ValuePtr splice_after(model::Graph& g, const model::ValuePtr& v) {
  const bool is_output = std::any_of(g.outputs.begin(), g.outputs.end(), [&](const auto& o) { return o == v; });
  model::ValuePtr fresh = model::Value::variable(is_output ? v->name : v->name + kInsertedSuffix);
  if (is_output) {
    fresh->dtype = v->dtype;
    v->name += kInsertedSuffix;
  }
  replace_uses(g, v, fresh);
  for (auto& o : g.outputs)
    if (o == v) o = fresh;
  return fresh;
}

// Right after the last producer of the inputs (0 for none), so a sorted graph stays sorted and
// the node stands where it acts, not last.
size_t insertion_index(const model::Graph& g, const std::vector<model::ValuePtr>& inputs) {
  size_t index = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& out : g.nodes[i]->outputs)
      if (out && std::any_of(inputs.begin(), inputs.end(), [&](const auto& in) { return in == out; })) index = i + 1;
  return index;
}

}  // namespace

bool insert_node(model::Graph& g, const InsertOptions& options) {
  PARITY_CHECK(!options.op.empty(), kInvalidArgument, "no --op given");
  PARITY_CHECK(!options.outputs.empty(), kInvalidArgument, "insert: give at least one tensor in --outputs");
  model::register_newer_onnx_schemas();
  const onnx::OpSchema* schema = nullptr;
  if (options.domain.empty() || options.domain == "ai.onnx") {
    const int64_t opset = g.opset("");
    schema = onnx::OpSchemaRegistry::Schema(options.op, static_cast<int>(opset), "");
    if (!schema) {
      std::vector<std::string> names;
      for (const auto& s : onnx::OpSchemaRegistry::get_all_schemas())
        if (s.domain().empty()) names.push_back(s.Name());
      std::sort(names.begin(), names.end());
      names.erase(std::unique(names.begin(), names.end()), names.end());
      const auto close = model::near_matches(options.op, names);
      // As Polygraphy: a custom op may sit in the default domain (a plugin's op often does).
      logger().warning("--op: '", options.op, "' is not an ONNX operator at opset ", opset,
                       close.empty() ? "" : "; did you mean '" + join_names(close, "', '") + "'?",
                       " Inserting it in the default domain unchecked (give --domain for a custom domain)");
    }
  }

  std::vector<model::ValuePtr> inputs;
  for (const auto& name : options.inputs) inputs.push_back(lookup_tensor(g, name, "--inputs"));
  // Outputs may be new tensors; existing ones lose their current producer.
  const auto producer = g.producers();
  std::vector<model::ValuePtr> outputs;
  for (const auto& name : options.outputs) {
    model::ValuePtr v = g.find_tensor(name);
    const bool also_input = std::any_of(inputs.begin(), inputs.end(), [&](const auto& i) { return i == v; });
    if (v && also_input) {
      outputs.push_back(splice_after(g, v));
      continue;
    }
    if (!v) {
      v = model::Value::variable(name);
    } else if (auto it = producer.find(v.get()); it != producer.end()) {
      for (auto& out : it->second->outputs)
        if (out == v) out = model::Value::variable(name + "_replaced_by_" + options.op);
    } else {
      PARITY_CHECK(!v->is_constant() && std::none_of(g.inputs.begin(), g.inputs.end(), [&](const auto& i) { return i == v; }),
                   kInvalidArgument, "--outputs: '", name,
                   "' is a graph input or constant and cannot be produced by a node (give it in --inputs too, to "
                   "insert the node right after it)");
    }
    outputs.push_back(v);
  }
  if (schema) {
    PARITY_CHECK(static_cast<int>(inputs.size()) >= schema->min_input() && static_cast<int>(inputs.size()) <= schema->max_input(),
                 kInvalidArgument, options.op, " takes ", schema->min_input(), " to ", schema->max_input(),
                 " inputs, got ", inputs.size());
    PARITY_CHECK(static_cast<int>(outputs.size()) >= schema->min_output() &&
                     static_cast<int>(outputs.size()) <= schema->max_output(),
                 kInvalidArgument, options.op, " produces ", schema->min_output(), " to ", schema->max_output(),
                 " outputs, got ", outputs.size());
  }
  auto node = std::make_shared<model::Node>(options.op, inputs, outputs,
                                         options.name.empty() ? options.op + "_inserted" : options.name);
  node->domain = options.domain == "ai.onnx" ? "" : options.domain;
  if (!node->domain.empty() && g.opset(node->domain) == 0) g.model.opset_imports.emplace_back(node->domain, 1);
  for (const auto& text : options.attrs) {
    Attribute a = parse_attribute(text, schema);
    const auto listed = std::find(node->added_attribute_order.begin(), node->added_attribute_order.end(), a.name);
    if (listed == node->added_attribute_order.end()) node->added_attribute_order.push_back(a.name);  // as given
    node->attrs[a.name] = std::move(a);
  }
  // New tensors that are not consumed anywhere become graph outputs, so the node is not cleaned away.
  const auto consumers = g.consumers();
  for (const auto& v : outputs)
    if (!consumers.count(v.get()) && std::none_of(g.outputs.begin(), g.outputs.end(), [&](const auto& o) { return o == v; }))
      g.outputs.push_back(v);
  g.nodes.insert(g.nodes.begin() + static_cast<long>(insertion_index(g, inputs)), node);
  g.cleanup(false, true);
  g.toposort();  // stable: only moves nodes when the in-place position broke the order
  return schema != nullptr;
}

}  // namespace parity::model::transforms
