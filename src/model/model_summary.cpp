#include "model/model_summary.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_set>

#include <fmt/format.h>

#include "core/metadata.h"
#include "core/numpy_format.h"
#include "core/text.h"
#include "model/graph.h"

namespace parity::model {

using nlohmann::ordered_json;

namespace {

std::string indent(const std::string& block, int levels) {
  const std::string pad(static_cast<size_t>(levels) * 4, ' ');
  std::string out;
  size_t start = 0;
  while (true) {
    const size_t nl = block.find('\n', start);
    const std::string line = block.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
    if (!line.empty()) out += pad + line;  // no trailing blanks on empty lines
    if (nl == std::string::npos) break;
    out += '\n';
    start = nl + 1;
  }
  return out;
}

std::string format_float(double v) {
  return fmt::format("{:.9g}", v);
}

std::string dtype_label(DType d) { return d == DType::kUndefined ? "None" : std::string(dtype_name(d)); }

std::string meta_text(const model::Value& v, bool mark_initializer) {
  std::string name = (mark_initializer && v.is_constant() ? "Initializer | " : "") + v.name;
  // A value whose type is recorded without a shape: Polygraphy reads its (absent) dims as ().
  if (v.shape.unknown_rank && v.dtype != DType::kUndefined) return name + " [dtype=" + dtype_label(v.dtype) + ", shape=()]";
  // Nothing known about it: Polygraphy prints the name alone ("{c}").
  if (v.shape.unknown_rank && v.dtype == DType::kUndefined) return name;
  return TensorMeta{name, v.dtype, v.shape}.to_string();
}

// Polygraphy prints a weight's dims as a list ("[2, 2]"), unlike tensor metadata's "(2, 2)".
std::string dims_list(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string list_text(const std::vector<model::ValuePtr>& values, bool mark_initializers) {
  std::string s = "{";
  bool first = true;
  for (const auto& v : values) {
    if (!v) continue;
    if (!first) s += ",\n ";
    first = false;
    s += meta_text(*v, mark_initializers);
  }
  return s + "}";
}

std::vector<model::ValuePtr> feed_inputs(const model::Graph& g) {
  std::vector<model::ValuePtr> out;
  for (const auto& v : g.inputs)
    if (v && !v->is_constant()) out.push_back(v);
  return out;
}

void collect_stats(const model::Graph& g, WeightStats& s) {
  for (const auto& v : g.initializers) {
    if (!v || !v->is_constant()) continue;
    ++s.initializers;
    s.initializer_bytes += v->constant_bytes();
    if (v->is_external()) ++s.external_initializers;
    ++s.dtype_counts[dtype_label(v->dtype)];
  }
  for (const auto& n : g.nodes) {
    if (n->op_type == "Constant" && (n->domain.empty() || n->domain == "ai.onnx")) {
      ++s.constant_nodes;
      auto it = n->attrs.find("value");
      if (it != n->attrs.end() && it->second.t.defined()) {
        const Tensor& t = it->second.t;
        s.constant_node_bytes += t.dtype() == DType::kString ? 0 : t.size_bytes();
        ++s.dtype_counts[dtype_label(t.dtype())];
      } else {
        ++s.dtype_counts["other"];
      }
    }
    for (const auto& [_, sub] : n->subgraphs) collect_stats(*sub, s);
  }
}

std::string attr_value_text(const Attribute& a, const model::Node& node, const SummaryOptions& o, int level);
std::string graph_text(const model::Graph& g, const SummaryOptions& o, int level);

std::string tensor_attr_text(const Tensor& t, const SummaryOptions& o) {
  std::string s = "Tensor: [dtype=" + dtype_label(t.dtype()) + ", shape=" + dims_list(t.shape()) + "]";
  if (o.weights) s += " | Values:\n" + indent(format_numpy(t), 1);
  return s;
}

std::string attr_value_text(const Attribute& a, const model::Node& node, const SummaryOptions& o, int level) {
  auto join = [](const auto& list, auto fmt) {
    std::string s = "[";
    for (size_t i = 0; i < list.size(); ++i) s += (i ? ", " : "") + fmt(list[i]);
    return s + "]";
  };
  switch (a.type) {
    case AttrType::kFloat: return format_float(a.f);
    case AttrType::kInt: return std::to_string(a.i);
    case AttrType::kString: return a.s;
    case AttrType::kFloats: return join(a.floats, [](float v) { return format_float(v); });
    case AttrType::kInts: return join(a.ints, [](int64_t v) { return std::to_string(v); });
    case AttrType::kStrings: return join(a.strings, [](const std::string& v) { return "'" + v + "'"; });
    case AttrType::kTensor: return tensor_attr_text(a.t, o);
    case AttrType::kTensors: return join(a.tensors, [&](const Tensor& t) { return tensor_attr_text(t, o); });
    case AttrType::kGraph: {
      auto it = node.subgraphs.find(a.name);
      // Polygraphy leaves a blank line after a subgraph, before the next attribute.
      return it == node.subgraphs.end() ? std::string("<graph>") : "\n" + graph_text(*it->second, o, 2) + "\n";
    }
    default: return std::string("<") + attr_type_name(a.type) + ">";
  }
}

std::string node_text(const model::Node& node, size_t index, const SummaryOptions& o) {
  std::string s = fmt::format("Node {:<4} | ", index) + node.name + " [Op: " + node.op_type + "]";
  if (!node.domain.empty()) s += " [Domain: " + node.domain + "]";
  s += "\n";
  const bool has_inputs = std::any_of(node.inputs.begin(), node.inputs.end(), [](const auto& v) { return v != nullptr; });
  if (has_inputs) {
    s += indent(list_text(node.inputs, true), 1) + "\n";
    s += indent(" -> " + indent(list_text(node.outputs, true), 1).substr(4), 1) + "\n";
  } else {  // Polygraphy keeps an input-less node (a Constant) on one line: "{} -> {...}"
    s += indent("{} -> " + indent(list_text(node.outputs, true), 1).substr(4), 1) + "\n";
  }
  if (o.attrs) {
    if (!node.attrs.empty()) s += indent("---- Attributes ----", 1) + "\n";
    for (const auto& name : node.attribute_order()) {
      const auto found = node.attrs.find(name);
      if (found == node.attrs.end()) continue;  // a subgraph kept only in node.subgraphs
      const Attribute& attr = found->second;
      const std::string prefix = node.name.empty() ? std::string() : node.name + ".";
      // A graph value starts on the next line: no blank after '='.
      std::string text = prefix + name + " = " + attr_value_text(attr, node, o, 2);
      if (const size_t nl = text.find(" \n"); attr.type == AttrType::kGraph && nl != std::string::npos) text.erase(nl, 1);
      s += indent(text, 1) + "\n";
    }
    if (!node.doc_string.empty()) s += indent("Docstring: " + node.doc_string, 1) + "\n";
  } else if (!node.subgraphs.empty()) {
    // Subgraphs are part of the structure: show them with the layers even without attributes.
    for (const auto& name : node.attribute_order()) {
      const auto sub = node.subgraphs.find(name);
      if (sub == node.subgraphs.end()) continue;
      const std::string prefix = node.name.empty() ? std::string() : node.name + ".";
      s += indent(prefix + name + " =\n" + graph_text(*sub->second, o, 2), 1) + "\n";
    }
  }
  return s;
}

std::string graph_text(const model::Graph& g, const SummaryOptions& o, int level) {
  const bool sub = level > 0;
  const std::string kind = sub ? "Subgraph" : "Graph";
  std::string s;
  if (o.attrs && !g.doc_string.empty()) s += "---- Docstring ----\n" + g.doc_string + "\n\n";
  const auto inputs = feed_inputs(g);
  s += str_cat("---- ", inputs.size(), " ", kind, " Input(s) ----\n", list_text(inputs, false), "\n\n");
  s += str_cat("---- ", g.outputs.size(), " ", kind, " Output(s) ----\n", list_text(g.outputs, false), "\n\n");
  size_t init_count = 0;
  for (const auto& v : g.initializers) init_count += v && v->is_constant();
  s += str_cat("---- ", init_count, " Initializer(s) ----\n");
  if (o.weights) {
    for (const auto& v : g.initializers) {
      if (!v || !v->is_constant()) continue;
      if (o.external_values_missing && v->is_external()) {
        s += "Initializer | " + v->name + " [dtype=" + dtype_label(v->dtype) + ", shape=" +
             dims_list(v->shape.to_static()) + "] | Values: not loaded (--ignore-external-data)\n\n";
        continue;
      }
      s += "Initializer | " + v->name + " [dtype=" + dtype_label(v->dtype) + ", shape=" + dims_list(v->values().shape()) +
           "] | Values:\n" + indent(format_numpy(v->values()), 1) + "\n\n";
    }
    if (!init_count) s += "{}\n\n";
  } else if (o.layers) {
    s += list_text(g.initializers, false) + "\n\n";
  } else {
    s += "\n";
  }
  if (!sub && o.info) {
    const WeightStats w = weight_stats(g);
    s += "---- Weights ----\n";
    s += str_cat(w.initializers, " initializer(s): ", format_bytes(w.initializer_bytes));
    if (w.external_initializers) s += str_cat(" (", w.external_initializers, " in external data)");
    s += str_cat(" | ", w.constant_nodes, " Constant node(s): ", format_bytes(w.constant_node_bytes), "\n");
    if (!w.dtype_counts.empty()) {
      s += "dtypes: {";
      bool first = true;
      for (const auto& [d, n] : w.dtype_counts) {
        s += str_cat(first ? "" : ", ", d, ": ", n);
        first = false;
      }
      s += "}\n";
    }
    s += "\n";
  }
  s += str_cat("---- ", g.nodes.size(), " Node(s) ----\n");
  if (o.layers)
    for (size_t i = 0; i < g.nodes.size(); ++i) s += node_text(*g.nodes[i], i, o) + "\n";
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return indent(s, level);
}

// --- JSON --------------------------------------------------------------------------------------

ordered_json shape_json(const DimShape& shape) {
  if (shape.unknown_rank) return nullptr;
  ordered_json dims = ordered_json::array();
  for (const auto& d : shape.dims) {
    if (d.is_static()) dims.push_back(d.value);
    else if (!d.symbol.empty()) dims.push_back(d.symbol);
    else dims.push_back(nullptr);
  }
  return dims;
}

ordered_json value_json(const model::Value& v) {
  ordered_json j;
  j["name"] = v.name;
  j["dtype"] = v.dtype == DType::kUndefined ? ordered_json(nullptr) : ordered_json(std::string(dtype_name(v.dtype)));
  j["shape"] = shape_json(v.shape);
  if (v.is_constant()) j["constant"] = true;
  return j;
}

ordered_json graph_json(const model::Graph& g, const SummaryOptions& o);

ordered_json attr_json(const Attribute& a, const model::Node& node, const SummaryOptions& o) {
  auto tensor_json = [&](const Tensor& t) {
    ordered_json j;
    j["dtype"] = dtype_label(t.dtype());
    j["shape"] = t.shape();
    return j;
  };
  switch (a.type) {
    case AttrType::kFloat: return a.f;
    case AttrType::kInt: return a.i;
    case AttrType::kString: return a.s;
    case AttrType::kFloats: return a.floats;
    case AttrType::kInts: return a.ints;
    case AttrType::kStrings: return a.strings;
    case AttrType::kTensor: return tensor_json(a.t);
    case AttrType::kTensors: {
      ordered_json list = ordered_json::array();
      for (const auto& t : a.tensors) list.push_back(tensor_json(t));
      return list;
    }
    case AttrType::kGraph: {
      auto it = node.subgraphs.find(a.name);
      return it == node.subgraphs.end() ? ordered_json(nullptr) : graph_json(*it->second, o);
    }
    default: return std::string("<") + attr_type_name(a.type) + ">";
  }
}

ordered_json graph_json(const model::Graph& g, const SummaryOptions& o) {
  ordered_json j;
  j["name"] = g.name;
  if (!g.doc_string.empty()) j["doc_string"] = g.doc_string;
  auto list = [](const std::vector<model::ValuePtr>& values) {
    ordered_json arr = ordered_json::array();
    for (const auto& v : values) arr.push_back(v ? value_json(*v) : ordered_json(nullptr));
    return arr;
  };
  j["inputs"] = list(feed_inputs(g));
  j["outputs"] = list(g.outputs);
  ordered_json inits = ordered_json::array();
  for (const auto& v : g.initializers) {
    if (!v || !v->is_constant()) continue;
    ordered_json e = value_json(*v);
    e["bytes"] = v->constant_bytes();
    if (v->is_external()) e["external"] = true;
    if (o.weights && !(o.external_values_missing && v->is_external()))
      e["values"] = format_values(v->values(), o.max_values);
    inits.push_back(e);
  }
  j["initializers"] = inits;
  j["node_count"] = g.nodes.size();
  ordered_json nodes = ordered_json::array();
  for (const auto& n : g.nodes) {
    ordered_json nj;
    nj["name"] = n->name;
    nj["op_type"] = n->op_type;
    if (!n->domain.empty()) nj["domain"] = n->domain;
    if (o.layers) {
      nj["inputs"] = list(n->inputs);
      nj["outputs"] = list(n->outputs);
    }
    if (o.attrs) {
      ordered_json attrs = ordered_json::object();
      for (const auto& name : n->attribute_order())
        if (const auto found = n->attrs.find(name); found != n->attrs.end()) attrs[name] = attr_json(found->second, *n, o);
      nj["attributes"] = attrs;
    }
    if (!n->subgraphs.empty()) {
      ordered_json subs = ordered_json::object();
      for (const auto& [name, sub] : n->subgraphs) subs[name] = graph_json(*sub, o);
      nj["subgraphs"] = subs;
    }
    if (o.layers || o.attrs || !n->subgraphs.empty()) nodes.push_back(nj);
  }
  if (o.layers || o.attrs || !nodes.empty()) j["nodes"] = nodes;
  return j;
}

}  // namespace

WeightStats weight_stats(const model::Graph& graph) {
  WeightStats s;
  collect_stats(graph, s);
  return s;
}

std::string format_bytes(uint64_t bytes) {
  const ScaledBytes scaled = scale_bytes(static_cast<double>(bytes));
  if (scaled.power == 0) return str_cat(bytes, " bytes");
  return fmt::format("{:.2f} {} ({} bytes)", scaled.value, scaled.unit, bytes);
}

std::string format_values(const Tensor& t, int64_t max_values) {
  if (!t.defined()) return "None";
  std::string s = "[";
  const int64_t n = t.numel();
  const int64_t shown = std::min(n, max_values);
  for (int64_t i = 0; i < shown; ++i) {
    if (i) s += ", ";
    if (t.dtype() == DType::kString) s += "'" + t.values<std::string>()[static_cast<size_t>(i)] + "'";
    else if (is_complex(t.dtype())) s += "<complex>";
    else if (is_floating(t.dtype())) s += format_float(t.value_as_double(i));
    else if (t.dtype() == DType::kBool) s += t.value_as_double(i) != 0 ? "True" : "False";
    else s += str_cat(static_cast<long long>(t.value_as_double(i)));
  }
  if (n > shown) s += str_cat(", ... (", n - shown, " more)");
  return s + "]";
}

namespace {

// The model-level facts `--show info` adds: IR version, producer, version, domain, metadata, doc string.
std::string model_info_text(const model::Graph& g) {
  std::string s = str_cat("\nIR Version: ", g.model.ir_version);
  if (!g.model.producer_name.empty() || !g.model.producer_version.empty())
    s += " | Producer: " + g.model.producer_name + (g.model.producer_version.empty() ? "" : " " + g.model.producer_version);
  if (g.model.model_version) s += str_cat(" | Model Version: ", g.model.model_version);
  if (!g.model.domain.empty()) s += " | Domain: " + g.model.domain;
  if (!g.model.metadata_props.empty()) {
    s += "\nMetadata: {";
    for (size_t i = 0; i < g.model.metadata_props.size(); ++i)
      s += str_cat(i ? ", " : "", "'", g.model.metadata_props[i].first, "': '", g.model.metadata_props[i].second, "'");
    s += "}";
  }
  if (!g.model.doc_string.empty()) s += "\nDocstring: " + g.model.doc_string;
  return s;
}

}  // namespace

std::string summarize_model_text(const model::Graph& g, const SummaryOptions& o) {
  std::string s = "Name: " + g.name + " | ONNX Opset: ";
  const int64_t opset = g.opset();
  s += opset ? std::to_string(opset) : std::string("Unknown");
  std::string others;
  for (const auto& [d, v] : g.model.opset_imports)
    if (!d.empty() && d != "ai.onnx") others += str_cat(others.empty() ? "" : ", ", "'", d, "': ", v);
  if (!others.empty()) s += " | Other Opsets: {" + others + "}";
  if (o.info) s += model_info_text(g);
  return s + "\n\n" + graph_text(g, o, 0);
}


std::string summarize_model_json(const model::Graph& g, const SummaryOptions& o) {
  ordered_json j;
  ordered_json m;
  m["ir_version"] = g.model.ir_version;
  ordered_json opsets = ordered_json::object();
  for (const auto& [d, v] : g.model.opset_imports) opsets[d.empty() ? std::string("ai.onnx") : d] = v;
  m["opset_imports"] = opsets;
  m["producer_name"] = g.model.producer_name;
  m["producer_version"] = g.model.producer_version;
  m["domain"] = g.model.domain;
  m["model_version"] = g.model.model_version;
  m["doc_string"] = g.model.doc_string;
  ordered_json props = ordered_json::object();
  for (const auto& [k, v] : g.model.metadata_props) props[k] = v;
  m["metadata_props"] = props;
  j["model"] = m;
  const WeightStats w = weight_stats(g);
  ordered_json wj;
  wj["initializers"] = w.initializers;
  wj["initializer_bytes"] = w.initializer_bytes;
  wj["external_initializers"] = w.external_initializers;
  wj["constant_nodes"] = w.constant_nodes;
  wj["constant_node_bytes"] = w.constant_node_bytes;
  wj["dtypes"] = w.dtype_counts;
  j["weights"] = wj;
  j["graph"] = graph_json(g, o);
  return j.dump(2, ' ', false, ordered_json::error_handler_t::replace);
}

}  // namespace parity::model
