#include "polygraphy_port/polygraphy_port_checks.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "support/test_support.h"

namespace parity::testing::polygraphy_port {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path port_dir() { return source_dir() / "tests" / "data" / "polygraphy_port"; }

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

fs::path path_in(const fs::path& scratch, const YAML::Node& node) {
  const fs::path p = expand(node.as<std::string>(), scratch);
  return p.is_absolute() ? p : scratch / p;
}

std::vector<std::string> strings(const YAML::Node& node) {
  std::vector<std::string> out;
  for (const auto& item : node) out.push_back(item.as<std::string>());
  return out;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const auto& s : items) out += (out.size() > 1 ? ", " : "") + s;
  return out + "]";
}

// ---- ONNX models ----

bool load_model(const fs::path& path, onnx::ModelProto& model) {
  std::ifstream in(path, std::ios::binary);
  return in && model.ParseFromIstream(&in);
}

std::set<std::string> initializer_names(const onnx::GraphProto& g) {
  std::set<std::string> names;
  for (const auto& t : g.initializer()) names.insert(t.name());
  return names;
}

// Graph inputs as onnx-graphsurgeon sees them: initializers listed as inputs are not inputs.
std::vector<const onnx::ValueInfoProto*> graph_inputs(const onnx::GraphProto& g) {
  const auto inits = initializer_names(g);
  std::vector<const onnx::ValueInfoProto*> out;
  for (const auto& v : g.input())
    if (!inits.count(v.name())) out.push_back(&v);
  return out;
}

std::vector<long long> fixed_shape(const onnx::ValueInfoProto& v) {
  std::vector<long long> dims;
  if (!v.type().tensor_type().has_shape()) return {-2};
  for (const auto& d : v.type().tensor_type().shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return dims;
}

std::string dtype_name(int elem_type) {
  static const std::map<int, std::string> names = {
      {1, "float32"}, {2, "uint8"},   {3, "int8"},     {5, "int16"},  {6, "int32"},  {7, "int64"},
      {9, "bool"},    {10, "float16"}, {11, "float64"}, {16, "bfloat16"}};
  const auto it = names.find(elem_type);
  return it == names.end() ? "type" + std::to_string(elem_type) : it->second;
}

size_t element_size(int elem_type) {
  switch (elem_type) {
    case 2: case 3: case 9: return 1;
    case 5: case 10: case 16: return 2;
    case 7: case 11: return 8;
    default: return 4;
  }
}

long long element_count(const onnx::TensorProto& t) {
  long long n = 1;
  for (auto d : t.dims()) n *= d;
  return n;
}

// How many elements the tensor's data holds, whichever field carries it.
long long stored_elements(const onnx::TensorProto& t) {
  if (!t.raw_data().empty()) return static_cast<long long>(t.raw_data().size() / element_size(t.data_type()));
  return t.float_data_size() + t.int32_data_size() + t.int64_data_size() + t.double_data_size() +
         t.uint64_data_size();
}

std::vector<float> float_values(const onnx::TensorProto& t) {
  std::vector<float> out;
  if (t.data_type() == 1 && !t.raw_data().empty()) {
    out.resize(t.raw_data().size() / 4);
    std::memcpy(out.data(), t.raw_data().data(), out.size() * 4);
  } else if (t.data_type() == 1) {
    out.assign(t.float_data().begin(), t.float_data().end());
  } else if ((t.data_type() == 10 || t.data_type() == 16) && !t.raw_data().empty()) {
    const auto* bits = reinterpret_cast<const uint16_t*>(t.raw_data().data());
    for (size_t i = 0; i < t.raw_data().size() / 2; ++i) out.push_back(bits[i] == 0 || bits[i] == 0x8000 ? 0.f : 1.f);
  } else {
    for (auto v : t.int32_data()) out.push_back(static_cast<float>(v));  // float16 in int32_data
  }
  return out;
}

// 2:4 sparsity (at least two zeros in every four consecutive elements) along one of the axes: the
// pruned axis is the one a kernel reduces over (a MatMul's K, a Conv's input channels).
bool is_sparse_2_4(const onnx::TensorProto& t) {
  const auto values = float_values(t);
  if (values.empty() || t.dims_size() < 2) return false;
  for (int axis = 0; axis < t.dims_size(); ++axis) {
    long long inner = 1;  // stride of `axis`
    for (int d = axis + 1; d < t.dims_size(); ++d) inner *= t.dims(d);
    const long long extent = t.dims(axis), outer = static_cast<long long>(values.size()) / (extent * inner);
    if (extent < 4) continue;
    bool sparse = true;
    for (long long o = 0; o < outer && sparse; ++o)
      for (long long i = 0; i < inner && sparse; ++i)
        for (long long start = 0; start + 4 <= extent && sparse; start += 4) {
          int zeros = 0;
          for (long long k = start; k < start + 4; ++k) zeros += values[(o * extent + k) * inner + i] == 0.f;
          sparse = zeros >= 2;
        }
    if (sparse) return true;
  }
  return false;
}

// The scalar integer a tensor holds, if it is a 0-d integer tensor.
std::optional<long long> scalar_int(const onnx::TensorProto& t) {
  if (t.dims_size() != 0 || (t.data_type() != 6 && t.data_type() != 7)) return std::nullopt;
  if (!t.raw_data().empty()) {
    if (t.data_type() == 7) return *reinterpret_cast<const int64_t*>(t.raw_data().data());
    return *reinterpret_cast<const int32_t*>(t.raw_data().data());
  }
  if (t.int64_data_size()) return t.int64_data(0);
  if (t.int32_data_size()) return t.int32_data(0);
  return std::nullopt;
}

const onnx::TensorProto* constant_named(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& t : g.initializer())
    if (t.name() == name) return &t;
  for (const auto& n : g.node())
    if (n.op_type() == "Constant" && n.output_size() == 1 && n.output(0) == name)
      for (const auto& a : n.attribute())
        if (a.name() == "value") return &a.t();
  return nullptr;
}

int node_index(const onnx::GraphProto& g, int index) { return index < 0 ? g.node_size() + index : index; }

void check_attrs(const onnx::NodeProto& node, const YAML::Node& expected, std::vector<std::string>& failures) {
  size_t i = 0;
  for (const auto& want : expected) {
    if (static_cast<int>(i) >= node.attribute_size()) {
      failures.push_back("node has no attribute #" + std::to_string(i) + " (" + want["name"].as<std::string>() + ")");
      return;
    }
    const auto& a = node.attribute(static_cast<int>(i++));
    const std::string where = "attribute #" + std::to_string(i - 1) + " '" + a.name() + "'";
    if (a.name() != want["name"].as<std::string>()) failures.push_back(where + ": expected name " + want["name"].as<std::string>());
    if (want["s"] && a.s() != want["s"].as<std::string>()) failures.push_back(where + ": s = '" + a.s() + "'");
    if (want["i"] && (a.type() != onnx::AttributeProto::INT || a.i() != want["i"].as<long long>()))
      failures.push_back(where + ": not the int " + want["i"].as<std::string>());
    if (want["f"] && (a.type() != onnx::AttributeProto::FLOAT || a.f() != want["f"].as<float>()))
      failures.push_back(where + ": not the float " + want["f"].as<std::string>());
    if (want["strings"] && std::vector<std::string>(a.strings().begin(), a.strings().end()) != strings(want["strings"]))
      failures.push_back(where + ": strings differ");
    if (want["ints"] && std::vector<long long>(a.ints().begin(), a.ints().end()) != want["ints"].as<std::vector<long long>>())
      failures.push_back(where + ": ints differ");
    if (want["floats"] && std::vector<float>(a.floats().begin(), a.floats().end()) != want["floats"].as<std::vector<float>>())
      failures.push_back(where + ": floats differ");
  }
}

std::set<std::string> lines_of(const fs::path& path) {
  std::set<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    out.insert(line);
  }
  return out;
}

// Polygraphy's pruned_initializer_sanity_check.
void check_stripped(const onnx::GraphProto& g, const YAML::Node& spec, const fs::path& file, const fs::path& scratch,
                    std::vector<std::string>& failures) {
  std::set<std::string> keep = spec["exclude_list"] ? lines_of(path_in(scratch, spec["exclude_list"])) : std::set<std::string>{};
  if (file.filename().string().find("qdq") != std::string::npos) keep.insert({"y_scale", "y_zero_point"});
  const bool sparse = spec["sparse"].as<bool>();
  for (const auto& t : g.initializer()) {
    if (keep.count(t.name())) {
      if (t.doc_string().find("TRT_WEIGHTLESS") != std::string::npos || stored_elements(t) != element_count(t))
        failures.push_back("excluded initializer " + t.name() + " was stripped");
      continue;
    }
    const std::string expected_doc = sparse ? "TRT_WEIGHTLESS/SPARSE_2_4" : "TRT_WEIGHTLESS/";
    if (!t.raw_data().empty() || t.doc_string() != expected_doc)
      failures.push_back("initializer " + t.name() + ": raw_data " + std::to_string(t.raw_data().size()) +
                         " bytes, doc_string '" + t.doc_string() + "' (expected empty data and '" + expected_doc + "')");
  }
}

// Polygraphy's reconstructed_initializer_sanity_check.
void check_reconstructed(const onnx::GraphProto& g, const fs::path& original, std::vector<std::string>& failures) {
  onnx::ModelProto source;
  if (!load_model(original, source)) return failures.push_back("cannot load " + original.string());
  std::set<std::string> sparse;
  for (const auto& t : source.graph().initializer())
    if (t.doc_string().find("SPARSE_2_4") != std::string::npos) sparse.insert(t.name());
  for (const auto& t : g.initializer()) {
    if (stored_elements(t) != element_count(t))
      failures.push_back("initializer " + t.name() + " holds " + std::to_string(stored_elements(t)) + " of " +
                         std::to_string(element_count(t)) + " elements");
    if (sparse.count(t.name()) && !is_sparse_2_4(t)) failures.push_back("initializer " + t.name() + " is not 2:4 sparse");
  }
}

void check_onnx(const YAML::Node& spec, const fs::path& scratch, std::vector<std::string>& failures) {
  const fs::path file = path_in(scratch, spec["file"]);
  onnx::ModelProto model;
  if (!load_model(file, model)) return failures.push_back("cannot load the ONNX model " + file.string());
  const auto& g = model.graph();
  auto fail = [&](const std::string& what) { failures.push_back(file.filename().string() + ": " + what); };
  std::vector<std::string> ops, names;
  for (const auto& n : g.node()) ops.push_back(n.op_type()), names.push_back(n.name());
  const auto inputs = graph_inputs(g);
  std::vector<std::string> input_names, output_names;
  for (const auto* v : inputs) input_names.push_back(v->name());
  for (const auto& v : g.output()) output_names.push_back(v.name());
  auto as_set = [](std::vector<std::string> v) { std::sort(v.begin(), v.end()); return v; };

  if (spec["node_ops"] && ops != strings(spec["node_ops"])) fail("node ops " + joined(ops));
  if (spec["node_count"] && g.node_size() != spec["node_count"].as<int>()) fail("node count " + std::to_string(g.node_size()));
  if (spec["node_count_at_most"] && g.node_size() > spec["node_count_at_most"].as<int>())
    fail("node count " + std::to_string(g.node_size()));
  if (spec["inputs"] && as_set(input_names) != as_set(strings(spec["inputs"]))) fail("inputs " + joined(input_names));
  if (spec["outputs"] && as_set(output_names) != as_set(strings(spec["outputs"]))) fail("outputs " + joined(output_names));
  if (spec["input_order"] && input_names != strings(spec["input_order"])) fail("inputs " + joined(input_names));
  if (spec["output_order"] && output_names != strings(spec["output_order"])) fail("outputs " + joined(output_names));
  if (spec["input_count"] && static_cast<int>(inputs.size()) != spec["input_count"].as<int>())
    fail("inputs " + joined(input_names));
  if (spec["output_count"] && g.output_size() != spec["output_count"].as<int>()) fail("outputs " + joined(output_names));
  if (spec["outputs_have_dtype"])
    for (const auto& v : g.output())
      if (v.type().tensor_type().elem_type() == 0) fail("output " + v.name() + " has no dtype");
  for (const auto& [key, list] : {std::pair{"input_dtypes", inputs.size()}, std::pair{"output_dtypes", size_t(g.output_size())}}) {
    if (!spec[key]) continue;
    const auto want = strings(spec[key]);
    for (size_t i = 0; i < want.size() && i < list; ++i) {
      const int type = std::string(key) == "input_dtypes" ? inputs[i]->type().tensor_type().elem_type()
                                                          : g.output(static_cast<int>(i)).type().tensor_type().elem_type();
      if (dtype_name(type) != want[i]) fail(std::string(key) + "[" + std::to_string(i) + "] is " + dtype_name(type));
    }
  }
  for (const auto& name : spec["node_names_include"] ? strings(spec["node_names_include"]) : std::vector<std::string>{})
    if (std::find(names.begin(), names.end(), name) == names.end()) fail("no node " + name + " in " + joined(names));
  for (const auto& name : spec["node_names_exclude"] ? strings(spec["node_names_exclude"]) : std::vector<std::string>{})
    if (std::find(names.begin(), names.end(), name) != names.end()) fail("node " + name + " is still there");
  for (const char* key : {"node_name", "node_op", "node_inputs"}) {
    if (!spec[key]) continue;
    for (const auto& entry : spec[key]) {
      const int i = node_index(g, entry.first.as<int>());
      if (i < 0 || i >= g.node_size()) { fail(std::string(key) + ": no node #" + entry.first.as<std::string>()); continue; }
      const auto& n = g.node(i);
      if (std::string(key) == "node_name" && n.name() != entry.second.as<std::string>()) fail("node #" + std::to_string(i) + " is " + n.name());
      if (std::string(key) == "node_op" && n.op_type() != entry.second.as<std::string>()) fail("node #" + std::to_string(i) + " is a " + n.op_type());
      if (std::string(key) == "node_inputs" && std::vector<std::string>(n.input().begin(), n.input().end()) != strings(entry.second))
        fail("node #" + std::to_string(i) + " reads " + joined({n.input().begin(), n.input().end()}));
    }
  }
  if (spec["node_attrs"]) {
    const int i = node_index(g, spec["node_attrs"]["node"].as<int>());
    if (i < 0 || i >= g.node_size()) fail("no node #" + std::to_string(i));
    else check_attrs(g.node(i), spec["node_attrs"]["attrs"], failures);
  }
  auto shape_of = [](const onnx::ValueInfoProto* v) { return v ? fixed_shape(*v) : std::vector<long long>{-3}; };
  if (spec["input_shape"] && shape_of(inputs.empty() ? nullptr : inputs[0]) != spec["input_shape"].as<std::vector<long long>>())
    fail("input 0 has not the shape " + spec["input_shape"].as<std::string>("") );
  if (spec["output_shape"] && shape_of(g.output_size() ? &g.output(0) : nullptr) != spec["output_shape"].as<std::vector<long long>>())
    fail("output 0 has not the expected shape");
  if (spec["input_dim_params"]) {
    for (const auto& entry : spec["input_dim_params"]) {
      const int d = entry.first.as<int>();
      const auto& shape = g.input(0).type().tensor_type().shape();
      if (d >= shape.dim_size() || shape.dim(d).dim_param() != entry.second.as<std::string>())
        fail("input 0 dim " + std::to_string(d) + " is not '" + entry.second.as<std::string>() + "'");
    }
  }
  if (spec["all_tensors_have_shape"]) {
    std::set<std::string> shaped = initializer_names(g);
    for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
      for (const auto& v : *list)
        if (v.type().tensor_type().has_shape()) shaped.insert(v.name());
    for (const auto& n : g.node())
      for (const auto& t : n.output())
        if (!shaped.count(t) && !constant_named(g, t)) fail("tensor " + t + " has no shape");
  }
  if (spec["min_bounds"]) {
    int mins = 0;
    for (const auto& n : g.node()) {
      if (n.op_type() != "Min") continue;
      ++mins;
      const auto* bound = n.input_size() > 1 ? constant_named(g, n.input(1)) : nullptr;
      const auto value = bound ? scalar_int(*bound) : std::nullopt;
      if (!value || std::to_string(*value) != spec["min_bounds"].as<std::string>())
        fail("Min " + n.name() + "'s second input is not the constant " + spec["min_bounds"].as<std::string>());
    }
    if (mins == 0) fail("no Min node");
  }
  if (spec["weights_stripped"]) check_stripped(g, spec["weights_stripped"], file, scratch, failures);
  if (spec["weights_reconstructed"]) check_reconstructed(g, path_in(scratch, spec["weights_reconstructed"]["from"]), failures);
}

// ---- JSON ----

// Whether `actual` is `expected` (a YAML value): maps key by key (all keys when `exact`), lists item by item.
bool same_value(const YAML::Node& expected, const json& actual, bool exact) {
  if (expected.IsMap()) {
    if (!actual.is_object() || (exact && actual.size() != expected.size())) return false;
    for (const auto& kv : expected) {
      const std::string key = kv.first.as<std::string>();
      if (key == "message_has") {
        if (!actual.contains("message") || actual["message"].get<std::string>().find(kv.second.as<std::string>()) == std::string::npos) return false;
      } else if (key == "message_has_one_of") {
        bool any = false;
        for (const auto& part : strings(kv.second))
          any |= actual.contains("message") && actual["message"].get<std::string>().find(part) != std::string::npos;
        if (!any) return false;
      } else if (!actual.contains(key) || !same_value(kv.second, actual[key], true)) {
        return false;
      }
    }
    return true;
  }
  if (expected.IsSequence()) {
    if (!actual.is_array() || actual.size() != expected.size()) return false;
    for (size_t i = 0; i < expected.size(); ++i)
      if (!same_value(expected[i], actual[i], exact)) return false;
    return true;
  }
  const std::string text = expected.as<std::string>();
  if (actual.is_string()) return actual.get<std::string>() == text;
  if (actual.is_boolean()) return (text == "true") == actual.get<bool>();
  if (actual.is_number()) return std::stod(text) == actual.get<double>();
  return false;
}

const json* at_path(const json& doc, const std::string& path) {
  const json* node = &doc;
  std::stringstream in(path);
  for (std::string part; std::getline(in, part, '.');) {
    if (node->is_array() && !part.empty() && std::isdigit(static_cast<unsigned char>(part[0]))) {
      const size_t i = std::stoul(part);
      if (i >= node->size()) return nullptr;
      node = &(*node)[i];
    } else if (node->is_object() && node->contains(part)) {
      node = &(*node)[part];
    } else {
      return nullptr;
    }
  }
  return node;
}

bool load_json(const fs::path& path, json& doc, std::vector<std::string>& failures) {
  try {
    doc = json::parse(read_file(path));
    return true;
  } catch (const std::exception& e) {
    failures.push_back("cannot read the JSON file " + path.string() + ": " + e.what());
    return false;
  }
}

void check_json(const YAML::Node& spec, const fs::path& scratch, std::vector<std::string>& failures) {
  json doc;
  if (!load_json(path_in(scratch, spec["file"]), doc, failures)) return;
  const std::string path = spec["path"].as<std::string>();
  const json* node = at_path(doc, path);
  static const json empty = json::array();
  if (!node && spec["missing_ok"]) node = &empty;
  if (!node) return failures.push_back(path + ": absent from the JSON");
  auto fail = [&](const std::string& what) { failures.push_back(path + " " + what + ": " + node->dump()); };
  if (spec["sorted_equals"]) {
    std::vector<std::string> have;
    for (const auto& v : *node) have.push_back(v.is_string() ? v.get<std::string>() : v.dump());
    auto want = strings(spec["sorted_equals"]);
    std::sort(have.begin(), have.end()), std::sort(want.begin(), want.end());
    if (have != want) fail("is not " + joined(want));
  }
  if (spec["equals"] && !same_value(spec["equals"], *node, true)) fail("differs");
  if (spec["matches"] && !same_value(spec["matches"], *node, false)) fail("does not match");
  if (spec["contains"]) {
    bool found = false;
    for (const auto& item : *node) found |= same_value(spec["contains"], item, true);
    if (!found) fail("lacks the expected item");
  }
  if (spec["any"]) {
    bool found = false;
    for (const auto& item : *node) found |= same_value(spec["any"], item, false);
    if (!found) fail("has no item matching");
  }
  if (spec["length"] && node->size() != spec["length"].as<size_t>()) fail("has not length " + spec["length"].as<std::string>());
  if (spec["length_at_least"] && node->size() < spec["length_at_least"].as<size_t>()) fail("is too short");
}

// A RunResults file: the first runner ran once, with `count` outputs including `has`.
void check_results(const YAML::Node& spec, const fs::path& scratch, std::vector<std::string>& failures) {
  json doc;
  if (!load_json(path_in(scratch, spec["file"]), doc, failures)) return;
  const json* iterations = at_path(doc, "lst.0.1");
  if (!iterations || iterations->size() != 1) return failures.push_back("results: not one iteration of one runner");
  const json& outputs = (*iterations)[0].contains("outputs") ? (*iterations)[0]["outputs"] : (*iterations)[0];
  if (outputs.size() != spec["count"].as<size_t>()) failures.push_back("results hold " + std::to_string(outputs.size()) + " outputs");
  for (const auto& name : strings(spec["has"]))
    if (!outputs.contains(name)) failures.push_back("results lack " + name);
}

// A feed list (Polygraphy's inputs JSON): `count` feeds, the first with exactly `keys` in order, arrays.
void check_feeds(const YAML::Node& spec, const fs::path& scratch, std::vector<std::string>& failures) {
  json doc;
  if (!load_json(path_in(scratch, spec["file"]), doc, failures)) return;
  if (!doc.is_array() || doc.size() != spec["count"].as<size_t>()) return failures.push_back("feeds: not " + spec["count"].as<std::string>() + " feeds");
  std::vector<std::string> keys;
  for (const auto& [k, v] : doc[0].items()) {
    keys.push_back(k);
    if (!v.is_object() || !v.contains("array")) failures.push_back("feed value " + k + " is not an array");
  }
  if (keys != strings(spec["keys"])) failures.push_back("feed keys " + joined(keys));
}

void check_plugin_config(const YAML::Node& spec, const fs::path& scratch, std::vector<std::string>& failures) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAllFromFile(path_in(scratch, spec["file"]).string());
  } catch (const std::exception& e) {
    return failures.push_back(std::string("config: ") + e.what());
  }
  if (docs.size() != spec["plugins"].as<size_t>()) failures.push_back("config holds " + std::to_string(docs.size()) + " plugins");
  for (const auto& plugin : docs) {
    if (plugin["name"].as<std::string>("") != spec["name"].as<std::string>()) failures.push_back("plugin name " + plugin["name"].as<std::string>(""));
    const auto instances = plugin["instances"];
    if (!instances || instances.size() != spec["instances"].as<size_t>()) { failures.push_back("instance count differs"); continue; }
    const auto first = instances[0];
    if (first["inputs"].size() != spec["inputs"].as<size_t>()) failures.push_back("instance inputs " + std::to_string(first["inputs"].size()));
    if (first["outputs"].size() != spec["outputs"].as<size_t>()) failures.push_back("instance outputs " + std::to_string(first["outputs"].size()));
    for (const auto& kv : spec["attribute"]) {
      const auto have = first["attributes"][kv.first.as<std::string>()];
      if (!have || have.as<std::string>() != kv.second.as<std::string>())
        failures.push_back("attribute " + kv.first.as<std::string>() + " = " + (have ? have.as<std::string>() : "(none)"));
    }
  }
}

}  // namespace

std::string expand(const std::string& text, const fs::path& scratch) {
  std::string out = replace_all(text, "$MODELS", (port_dir() / "models").string());
  out = replace_all(out, "$INPUTS", (port_dir() / "inputs").string());
  out = replace_all(out, "$CHECKER", (port_dir() / "fake_reduce_checker.sh").string());
  out = replace_all(out, "$PARITY", PARITY_BINARY);
  out = replace_all(out, "$PYTHON", "python3");
  return replace_all(out, "$TMP", scratch.string());
}

void run_check(const YAML::Node& check, const fs::path& scratch, std::vector<std::string>& failures) {
  const std::string kind = check.begin()->first.as<std::string>();
  const YAML::Node spec = check.begin()->second;
  if (kind == "nonempty") {
    const fs::path p = path_in(scratch, spec);
    if (!fs::exists(p) || fs::file_size(p) == 0) failures.push_back(p.filename().string() + " is missing or empty");
  } else if (kind == "exists" || kind == "absent") {
    const fs::path p = path_in(scratch, spec);
    if (fs::exists(p) != (kind == "exists")) failures.push_back(p.filename().string() + (kind == "exists" ? " is missing" : " exists"));
  } else if (kind == "same_file" || kind == "differ_if_exists") {
    const fs::path a = path_in(scratch, spec[0]), b = path_in(scratch, spec[1]);
    if (kind == "differ_if_exists" && !fs::exists(b)) return;
    if (!fs::exists(a) || !fs::exists(b)) return failures.push_back(a.filename().string() + " or " + b.filename().string() + " is missing");
    if ((read_file(a) == read_file(b)) != (kind == "same_file"))
      failures.push_back(a.filename().string() + " and " + b.filename().string() + (kind == "same_file" ? " differ" : " are the same"));
  } else if (kind == "onnx") {
    check_onnx(spec, scratch, failures);
  } else if (kind == "json") {
    check_json(spec, scratch, failures);
  } else if (kind == "results") {
    check_results(spec, scratch, failures);
  } else if (kind == "feeds") {
    check_feeds(spec, scratch, failures);
  } else if (kind == "plugin_config") {
    check_plugin_config(spec, scratch, failures);
  } else {
    failures.push_back("unknown check '" + kind + "' in the case file");
  }
}

bool shape_inference_was_run(const std::string& output, const fs::path& model_path) {
  if (output.find("Shape inference completed successfully") == std::string::npos) return false;
  onnx::ModelProto model;
  if (!load_model(model_path, model)) return false;
  for (const auto& v : model.graph().value_info())
    if (!v.type().tensor_type().has_shape()) return false;
  return true;
}

}  // namespace parity::testing::polygraphy_port
