#include "tools/plugin_patterns.h"

#include "core/logger.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <set>

#include "core/formats/file_io.h"
#include "core/text.h"

namespace parity::tools {

namespace fs = std::filesystem;
using model::Attribute;
using model::AttrType;
using model::transforms::SubgraphPattern;

namespace {

std::optional<int64_t> as_int(const std::string& s) {
  if (s.empty()) return std::nullopt;
  size_t used = 0;
  try {
    const long long v = std::stoll(s, &used);
    if (used == s.size()) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::optional<double> as_double(const std::string& s) {
  if (s.empty()) return std::nullopt;
  size_t used = 0;
  try {
    const double v = std::stod(s, &used);
    if (used == s.size()) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// A YAML scalar or list as an ONNX attribute: whole numbers are ints, other numbers floats, the
// rest strings.
Attribute attribute_from_yaml(const YAML::Node& node, const std::string& name, const std::string& where) {
  Attribute a;
  a.name = name;
  if (node.IsScalar()) {
    const std::string text = node.Scalar();
    if (auto i = as_int(text)) {
      a.type = AttrType::kInt;
      a.i = *i;
    } else if (auto d = as_double(text)) {
      a.type = AttrType::kFloat;
      a.f = static_cast<float>(*d);
    } else {
      a.type = AttrType::kString;
      a.s = text;
    }
    return a;
  }
  PARITY_CHECK(node.IsSequence(), kInvalidArgument, where, ": attribute '", name,
               "' must be a number, a string or a list of them");
  bool all_int = true, all_number = true;
  for (const auto& item : node) {
    PARITY_CHECK(item.IsScalar(), kInvalidArgument, where, ": attribute '", name, "' holds a nested list");
    all_int = all_int && as_int(item.Scalar());
    all_number = all_number && as_double(item.Scalar());
  }
  a.type = all_int ? AttrType::kInts : all_number ? AttrType::kFloats : AttrType::kStrings;
  for (const auto& item : node) {
    if (all_int) a.ints.push_back(*as_int(item.Scalar()));
    else if (all_number) a.floats.push_back(static_cast<float>(*as_double(item.Scalar())));
    else a.strings.push_back(item.Scalar());
  }
  return a;
}

// The shortest text that reads back as the same float (0.1, not 0.100000001).
std::string float_text(float f) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, f);
  std::string text(buffer, result.ptr);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";  // stays a float when read back
  return text;
}

YAML::Node attribute_to_yaml(const Attribute& a, const std::string& plugin) {
  YAML::Node node;
  switch (a.type) {
    case AttrType::kInt: node = a.i; break;
    case AttrType::kFloat: node = float_text(a.f); break;
    case AttrType::kString: node = a.s; break;
    case AttrType::kInts:
      for (auto v : a.ints) node.push_back(v);
      break;
    case AttrType::kFloats:
      for (auto v : a.floats) node.push_back(float_text(v));
      break;
    case AttrType::kStrings:
      for (const auto& v : a.strings) node.push_back(v);
      break;
    default:
      fail(ErrorCode::kInvalidArgument, "plugin '", plugin, "': attribute '", a.name, "' is a ",
           model::attr_type_name(a.type), "; config.yaml holds numbers, strings and lists of them");
  }
  if (node.IsSequence()) node.SetStyle(YAML::EmitterStyle::Flow);
  return node;
}

std::vector<std::string> string_list(const YAML::Node& node, const std::string& key, const std::string& where,
                                     bool required = true) {
  std::vector<std::string> out;
  const YAML::Node list = node[key];
  if (!list) {
    PARITY_CHECK(!required, kInvalidArgument, where, ": '", key, "' is missing");
    return out;
  }
  PARITY_CHECK(list.IsSequence(), kInvalidArgument, where, ": '", key, "' must be a list of tensor names");
  for (const auto& item : list) out.push_back(item.IsNull() ? std::string() : item.Scalar());
  return out;
}

std::string scalar(const YAML::Node& node, const std::string& key, const std::string& fallback = {}) {
  const YAML::Node v = node[key];
  return v && v.IsScalar() ? v.Scalar() : fallback;
}

YAML::Node load_yaml(const fs::path& file, bool all_documents, std::vector<YAML::Node>* documents) {
  PARITY_CHECK(fs::is_regular_file(file), kNotFound, "'", file.string(), "' does not exist");
  const std::string text = formats::read_binary_file(file.string());
  try {
    if (all_documents) {
      *documents = YAML::LoadAll(text);
      return {};
    }
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    fail(ErrorCode::kInvalidArgument, "'", file.string(), "' is not valid YAML: ", e.what());
  }
}

}  // namespace

SubgraphPattern load_pattern(const fs::path& file) {
  const std::string where = file.string();
  const YAML::Node root = load_yaml(file, false, nullptr);
  PARITY_CHECK(root.IsMap(), kInvalidArgument, where, ": a pattern file is a map with op, inputs, outputs and nodes");
  SubgraphPattern p;
  p.name = scalar(root, "name", file.parent_path().filename().string());
  p.op_type = scalar(root, "op");
  p.domain = scalar(root, "domain");
  p.inputs = string_list(root, "inputs", where);
  p.outputs = string_list(root, "outputs", where);
  const YAML::Node nodes = root["nodes"];
  PARITY_CHECK(nodes && nodes.IsSequence(), kInvalidArgument, where, ": 'nodes' must be a list");
  for (const auto& n : nodes) {
    PARITY_CHECK(n.IsMap(), kInvalidArgument, where, ": every entry of 'nodes' is a map (name, op, inputs, outputs)");
    model::transforms::PatternNode node;
    node.op_type = scalar(n, "op");
    node.name = scalar(n, "name", node.op_type + "_" + std::to_string(p.nodes.size()));
    node.domain = scalar(n, "domain");
    const std::string node_where = where + ": node '" + node.name + "'";
    node.inputs = string_list(n, "inputs", node_where);
    node.outputs = string_list(n, "outputs", node_where);
    if (const YAML::Node attrs = n["attrs"]) {
      PARITY_CHECK(attrs.IsMap(), kInvalidArgument, node_where, ": 'attrs' must be a map of attribute conditions");
      for (const auto& kv : attrs) {
        const std::string attr = kv.first.Scalar();
        if (kv.second.IsMap()) {  // {lt: 2.0}, several comparisons all hold
          for (const auto& cmp : kv.second)
            node.conditions.push_back({attr, cmp.first.Scalar(), attribute_from_yaml(cmp.second, attr, node_where)});
        } else {
          node.conditions.push_back({attr, "eq", attribute_from_yaml(kv.second, attr, node_where)});
        }
      }
    }
    p.nodes.push_back(std::move(node));
  }
  if (const YAML::Node attrs = root["attributes"]) {
    PARITY_CHECK(attrs.IsMap(), kInvalidArgument, where, ": 'attributes' must be a map");
    for (const auto& kv : attrs) {
      model::transforms::PluginAttribute a;
      a.name = kv.first.Scalar();
      const std::string text = kv.second.IsScalar() ? kv.second.Scalar() : std::string();
      if (!text.empty() && text[0] == '$') {  // "$node.attr" or "$node.attr * k": the matched node's value
        const size_t dot = text.find('.'), times = text.find('*');
        const std::string ref = trim(text.substr(0, times));
        PARITY_CHECK(dot != std::string::npos && dot > 1 && dot + 1 < ref.size() &&
                         ref.find_first_of(" \t") == std::string::npos,
                     kInvalidArgument, where, ": attribute '", a.name, "' = '", text,
                     "' should be $node.attribute or $node.attribute * number");
        a.from_node = ref.substr(1, dot - 1);
        a.from_attribute = ref.substr(dot + 1);
        if (times != std::string::npos) {
          const std::string factor = trim(text.substr(times + 1));
          char* end = nullptr;
          a.scale = std::strtod(factor.c_str(), &end);
          PARITY_CHECK(!factor.empty() && end == factor.c_str() + factor.size(), kInvalidArgument, where,
                       ": attribute '", a.name, "' = '", text, "': '", factor, "' is not a number");
        }
      } else {
        a.value = attribute_from_yaml(kv.second, a.name, where);
      }
      p.attributes.push_back(std::move(a));
    }
  }
  try {
    model::transforms::validate_pattern(p);
  } catch (const Error& e) {
    fail(ErrorCode::kInvalidArgument, where, ": ", e.what());
  }
  return p;
}

std::vector<SubgraphPattern> load_plugins(const fs::path& plugin_dir, const std::vector<std::string>& include,
                                          const std::vector<std::string>& exclude) {
  PARITY_CHECK(fs::is_directory(plugin_dir), kNotFound, "plugin folder '", plugin_dir.string(), "' does not exist");
  std::vector<fs::path> folders;
  std::set<std::string> python_only;  // Polygraphy's plugin folders: pattern.py, no pattern.yaml
  for (const auto& entry : fs::directory_iterator(plugin_dir)) {
    if (!entry.is_directory()) continue;
    if (fs::is_regular_file(entry.path() / kPatternFileName)) folders.push_back(entry.path());
    else if (fs::is_regular_file(entry.path() / "pattern.py")) python_only.insert(entry.path().filename().string());
  }
  std::sort(folders.begin(), folders.end());
  std::set<std::string> available;
  for (const auto& f : folders) available.insert(f.filename().string());
  for (const auto& name : include) {
    PARITY_CHECK(!python_only.count(name), kInvalidArgument, "--include: plugin '", name, "' has Polygraphy's pattern.py, "
                 "Python that parity cannot run; write its pattern as ", kPatternFileName,
                 " (docs/polygraphy-differences.md, Plugin patterns)");
    PARITY_CHECK(available.count(name), kNotFound, "--include: no plugin folder '", name, "' with a ", kPatternFileName,
                 " in '", plugin_dir.string(), "'");
  }
  for (const auto& name : python_only)
    if (include.empty() && std::find(exclude.begin(), exclude.end(), name) == exclude.end())
      logger().warning("plugin '", name, "' is skipped: its folder holds Polygraphy's pattern.py, Python that parity "
                       "cannot run; write its pattern as ", kPatternFileName,
                       " (docs/polygraphy-differences.md, Plugin patterns)");
  std::vector<SubgraphPattern> plugins;
  for (const auto& f : folders) {
    const std::string name = f.filename().string();
    if (!include.empty() && std::find(include.begin(), include.end(), name) == include.end()) continue;
    if (std::find(exclude.begin(), exclude.end(), name) != exclude.end()) continue;
    plugins.push_back(load_pattern(f / kPatternFileName));
  }
  return plugins;
}

std::vector<PluginSubstitutions> match_plugins(const model::Graph& graph, const std::vector<SubgraphPattern>& plugins) {
  std::vector<PluginSubstitutions> out;
  for (const auto& p : plugins) {
    auto matches = model::transforms::find_pattern_matches(graph, p);
    if (matches.empty()) continue;
    out.push_back({p.name, p.op_type, p.domain, std::move(matches)});
  }
  return out;
}

std::string substitutions_to_yaml(const std::vector<PluginSubstitutions>& substitutions) {
  YAML::Emitter emitter;
  for (const auto& s : substitutions) {
    YAML::Node doc;
    doc["name"] = s.name;
    doc["op"] = s.op_type;
    if (!s.domain.empty()) doc["domain"] = s.domain;
    for (const auto& m : s.instances) {
      YAML::Node instance;
      // Each tensor once, as Polygraphy lists them (a set): a tensor bound to two pattern inputs
      // feeds the plugin node once.
      std::set<std::string> listed;
      for (const auto& i : m.inputs)
        if (listed.insert(i).second) instance["inputs"].push_back(i);
      for (const auto& o : m.outputs) instance["outputs"].push_back(o);
      if (!m.inputs.empty()) instance["inputs"].SetStyle(YAML::EmitterStyle::Flow);
      instance["outputs"].SetStyle(YAML::EmitterStyle::Flow);
      for (const auto& [name, a] : m.attributes) instance["attributes"][name] = attribute_to_yaml(a, s.name);
      doc["instances"].push_back(instance);
    }
    emitter << YAML::BeginDoc << doc;
  }
  return std::string(emitter.c_str()) + "\n";
}

std::vector<PluginSubstitutions> load_substitutions(const fs::path& file) {
  const std::string where = file.string();
  std::vector<YAML::Node> documents;
  load_yaml(file, true, &documents);
  std::vector<PluginSubstitutions> out;
  for (const auto& doc : documents) {
    if (doc.IsNull()) continue;  // an emptied document: the user removed every instance
    PARITY_CHECK(doc.IsMap(), kInvalidArgument, where, ": each document is a map with name, op and instances");
    PluginSubstitutions s;
    s.name = scalar(doc, "name");
    s.op_type = scalar(doc, "op");
    s.domain = scalar(doc, "domain");
    PARITY_CHECK(!s.name.empty() && !s.op_type.empty(), kInvalidArgument, where,
                 ": a document lacks 'name' or 'op'");
    const std::string plugin_where = where + ": plugin '" + s.name + "'";
    if (const YAML::Node instances = doc["instances"]) {
      PARITY_CHECK(instances.IsSequence(), kInvalidArgument, plugin_where, ": 'instances' must be a list");
      for (const auto& inst : instances) {
        model::transforms::PatternMatch m;
        m.inputs = string_list(inst, "inputs", plugin_where, /*required=*/false);
        m.outputs = string_list(inst, "outputs", plugin_where);
        if (const YAML::Node attrs = inst["attributes"])
          for (const auto& kv : attrs)
            m.attributes[kv.first.Scalar()] = attribute_from_yaml(kv.second, kv.first.Scalar(), plugin_where);
        s.instances.push_back(std::move(m));
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::pair<std::string, size_t>> apply_substitutions(model::Graph& graph,
                                                                 const std::vector<PluginSubstitutions>& substitutions) {
  std::vector<std::pair<std::string, size_t>> counts;
  for (const auto& s : substitutions) {
    size_t replaced = 0;
    for (size_t k = 0; k < s.instances.size(); ++k) {
      const auto& m = s.instances[k];
      std::string name = s.name + "_" + std::to_string(k);
      std::set<std::string> taken;
      for (const auto& n : graph.nodes) taken.insert(n->name);
      for (int n = 1; taken.count(name); ++n) name = s.name + "_" + std::to_string(k) + "_" + std::to_string(n);
      try {
        model::transforms::replace_subgraph(graph, m.inputs, m.outputs, s.op_type, s.domain, m.attributes, name);
      } catch (const Error& e) {
        fail(e.code(), "plugin '", s.name, "' instance ", k, ": ", e.what());
      }
      ++replaced;
    }
    counts.emplace_back(s.name, replaced);
  }
  return counts;
}

}  // namespace parity::tools
