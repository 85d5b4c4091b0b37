#include "tools/model_lint.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "compare/data_loader.h"
#include "core/logger.h"
#include "model/checker.h"
#include "model/graph.h"
#include "model/known_operators.h"
#include "model/model.h"
#include "model/proto_convert.h"
#include "model/shape_inference.h"
#include "runners/registry.h"
#include "runners/runner.h"
#include "runtime/kernel.h"
#include "runtime/session.h"

namespace parity::tools {

namespace fs = std::filesystem;
using model::Model;
using model::ShapeInferenceOptions;
using model::normalize_domain;
using model::load_model;
using model::newer_than_library_warnings;

void LintReport::add(std::string level, std::string source, std::string message, std::vector<std::string> nodes) {
  // Messages are one line in the report, as Polygraphy prunes them.
  std::replace(message.begin(), message.end(), '\n', ' ');
  while (!message.empty() && message.back() == ' ') message.pop_back();
  entries.push_back({std::move(level), std::move(source), std::move(message), std::move(nodes)});
}

bool LintReport::has_errors() const { return count("exception") > 0; }

size_t LintReport::count(const std::string& level) const {
  return static_cast<size_t>(std::count_if(entries.begin(), entries.end(), [&](const LintEntry& e) { return e.level == level; }));
}

std::string LintReport::to_json() const {
  nlohmann::ordered_json j;
  j["summary"]["passing"] = passing;
  j["summary"]["failing"] = failing;
  j["lint_entries"] = nlohmann::ordered_json::array();
  for (const auto& e : entries) {
    nlohmann::ordered_json entry;
    entry["level"] = e.level;
    entry["source"] = e.source;
    entry["message"] = e.message;
    if (!e.nodes.empty()) entry["nodes"] = e.nodes;
    j["lint_entries"].push_back(entry);
  }
  return j.dump(4, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

namespace {

const char* const kError = "exception";
const char* const kWarning = "warning";

bool is_custom_op_message(const std::string& m) {
  return m.find("No opset import for domain") != std::string::npos ||
         m.find("is not a registered function/op") != std::string::npos;
}

// Every node name of the graph and its subgraphs.
void collect_names(const model::Graph& g, std::unordered_set<std::string>& names) {
  for (const auto& n : g.nodes) {
    if (!n->name.empty()) names.insert(n->name);
    for (const auto& [_, sub] : n->subgraphs) collect_names(*sub, names);
  }
}

/// Display names for every node, recursively. An unnamed node is called as Polygraphy's lint calls
/// it, "polygraphy_unnamed_node_<index in its graph>", or "..._<index>_<uid>" (uid counting up
/// across the model) when that name is taken.
void label_nodes(const model::Graph& g, std::unordered_map<const model::Node*, std::string>& labels,
                 std::unordered_set<std::string>& names, size_t& uid) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const auto& n = g.nodes[i];
    std::string label = n->name;
    if (label.empty()) {
      label = "polygraphy_unnamed_node_" + std::to_string(i);
      while (names.count(label)) label = "polygraphy_unnamed_node_" + std::to_string(i) + "_" + std::to_string(uid++);
      names.insert(label);
    }
    labels[n.get()] = label;
    for (const auto& [_, sub] : n->subgraphs) label_nodes(*sub, labels, names, uid);
  }
}

class Linter {
 public:
  Linter(const Model& model, LintReport& report, const TensorMap* inputs, const LintOptions& options)
      : model_(model), report_(report), inputs_(inputs), options_(options) {}

  void run() {
    const auto& graph_proto = model_.proto().graph();
    if (graph_proto.node_size() == 0) report_.add(kWarning, "onnx_loader", "ONNX model has no nodes");
    newer_ = newer_than_library_warnings(model_.proto());
    unknown_ = model::unknown_operators(model_.proto());
    for (const auto& w : newer_)
      if (!said_by_unknown_operator(w)) report_.add(kWarning, "parity", "The model's " + w);
    report_unknown_operators();

    graph_ = model::Graph::from_model(model_);
    std::unordered_set<std::string> names;
    collect_names(*graph_, names);
    size_t uid = 0;
    label_nodes(*graph_, labels_, names, uid);

    check_with_libonnx();
    check_duplicate_names(*graph_, {});
    check_cycles(*graph_);
    check_shape_inference();
    check_output_shapes();
    check_unused();
    check_kernels(*graph_);
    check_nondeterminism(*graph_);
    if (inputs_) check_inference(*inputs_);
    if (options_.onnxruntime) check_with_onnxruntime();
    summarize();
  }

 private:
  std::string label(const model::Node* n) const { return labels_.at(n); }

  // An op without a schema at the model's opset (model/known_operators.h) is one error naming its
  // nodes; libonnx's "No Op registered" and the missing-kernel warning for it would only repeat it.
  void report_unknown_operators() {
    for (const auto& u : unknown_) {
      std::vector<std::string> nodes;
      for (const auto& name : u.nodes)
        if (!name.empty()) nodes.push_back(name);
      report_.add(kError, "parity", u.message, std::move(nodes));
    }
  }

  bool is_unknown_operator(const std::string& domain, const std::string& op, int64_t opset) const {
    return std::any_of(unknown_.begin(), unknown_.end(), [&](const model::UnknownOperator& u) {
      return u.domain == domain && u.op_type == op && u.opset == opset;
    });
  }

  // A domain's "opset N is newer than this build's schemas" warning, when an unknown-operator error
  // already names that domain's newer opset.
  bool said_by_unknown_operator(const std::string& warning) const {
    return std::any_of(unknown_.begin(), unknown_.end(), [&](const model::UnknownOperator& u) {
      const std::string domain = u.domain.empty() ? "ai.onnx" : u.domain;
      return warning.rfind(str_cat("opset ", u.opset, " of domain '", domain, "'"), 0) == 0 &&
             u.message.find(" is newer than parity knows") != std::string::npos;
    });
  }

  // libonnx's checker, node by node: every failing node is named, and what only a libonnx newer
  // than this build could judge (newer IR or opsets) is a warning, never a hidden error.
  void check_with_libonnx() {
    // libonnx's check_graph requires a graph name (its node-by-node run here does not check it;
    // parity's saving tolerates an unnamed graph, lint reports it as Polygraphy's checker does).
    if (model_.proto().graph().name().empty())
      report_.add(kError, "onnx_checker", "Field 'name' of 'graph' is required to be non-empty.");
    for (const auto& f : model::check_model_proto(model_.proto(), model_.base_dir())) {
      if (f.node < 0 && f.message.rfind("IR version ", 0) == 0) continue;  // said by newer_ already
      // --ignore-external-data: the weight files are known to be missing; that is not the model's fault.
      if (model_.external_data_ignored() && f.message.rfind("Data of TensorProto (", 0) == 0) continue;
      std::vector<std::string> nodes;
      if (f.node >= 0 && static_cast<size_t>(f.node) < graph_->nodes.size()) {
        const model::Node* node = graph_->nodes[static_cast<size_t>(f.node)].get();
        const std::string domain = normalize_domain(node->domain);
        if (is_unknown_operator(domain, node->op_type, graph_->opset(domain))) continue;
        nodes.push_back(label(node));
      }
      const bool error = f.error && !is_custom_op_message(f.message);
      if (error)
        for (const auto& n : nodes) failed_checker_.insert(n);
      report_.add(error ? kError : kWarning, "onnx_checker", f.message, std::move(nodes));
    }
  }

  void check_duplicate_names(const model::Graph& g, const std::set<std::string>& outer) {
    // Polygraphy's onnx-graphsurgeon check, its wording and the nodes' positions in their graph.
    std::map<std::string, std::vector<size_t>> by_name;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (!g.nodes[i]->name.empty()) by_name[g.nodes[i]->name].push_back(i);
    for (const auto& [name, ids] : by_name)
      if (ids.size() > 1) {
        std::string list;
        for (size_t id : ids) list += (list.empty() ? "" : ", ") + std::to_string(id);
        report_.add(kError, "onnx_graphsurgeon",
                    str_cat("Duplicate node name: '", name, "' for nodes with topological IDs: [", list, "] found."),
                    {name});
      }

    // Every tensor must be defined once: graph input, initializer or one node output.
    std::set<std::string> initializer_names;
    for (const auto& v : g.initializers) initializer_names.insert(v->name);
    std::map<std::string, std::vector<std::string>> definitions;  // name -> what defines it
    std::map<std::string, std::vector<std::string>> producing_nodes;
    for (const auto& v : g.initializers) definitions[v->name].push_back("an initializer");
    for (const auto& v : g.inputs)
      if (!initializer_names.count(v->name)) definitions[v->name].push_back("a graph input");
    for (const auto& n : g.nodes)
      for (const auto& v : n->outputs)
        if (v) {
          definitions[v->name].push_back("node '" + label(n.get()) + "'");
          producing_nodes[v->name].push_back(label(n.get()));
        }
    for (const auto& [name, defs] : definitions) {
      const bool only_graph_inputs =
          std::all_of(defs.begin(), defs.end(), [](const std::string& d) { return d == "a graph input"; });
      if (defs.size() > 1 && only_graph_inputs)  // ONNX's checker rule, in its words, as Polygraphy reports it
        report_.add(kError, "onnx_checker", str_cat("Graph must be in single static assignment (SSA) form, however '",
                                                    name, "' has been used as graph input names multiple times."));
      else if (defs.size() > 1)
        report_.add(kError, "parity", str_cat("Duplicate tensor name: '", name, "' is defined ", defs.size(),
                                              " times (by ", join_names(defs), ")"),
                    producing_nodes[name]);
      else if (outer.count(name))
        report_.add(kError, "parity", "Tensor '" + name + "' in subgraph '" + g.name +
                                          "' shadows a tensor of an enclosing graph", producing_nodes[name]);
    }
    std::set<std::string> visible = outer;
    for (const auto& [name, _] : definitions) visible.insert(name);
    for (const auto& n : g.nodes)
      for (const auto& [_, sub] : n->subgraphs) check_duplicate_names(*sub, visible);
  }

  void check_cycles(const model::Graph& g) {
    const auto cycle = g.find_cycle();
    if (!cycle.empty()) {
      std::vector<std::string> names;
      std::string text;
      for (const auto& n : cycle) {
        names.push_back(label(n.get()));
        text += label(n.get()) + " -> ";
      }
      text += label(cycle.front().get());
      report_.add(kError, "parity", "Graph '" + g.name + "' has a cycle: " + text, names);
    }
    for (const auto& n : g.nodes)
      for (const auto& [_, sub] : n->subgraphs) check_cycles(*sub);
  }

  void check_shape_inference() {
    onnx::ModelProto copy(model_.proto());
    ShapeInferenceOptions strict;
    strict.strict = true;
    try {
      infer_shapes(copy, strict);
    } catch (const Error& e) {
      report_node_inference_errors(e.what());
    }
  }

  // libonnx lists every node it could not infer as "(op_type:Add, node name: bad_add): <error>".
  // Each named node with its own error fails, as Polygraphy's node-by-node lint names it; nodes
  // that only lack a type because an earlier node failed are not blamed, nor twice a node that
  // already fails libonnx's checker. Unattributed messages and models newer than libonnx stay warnings.
  void report_node_inference_errors(const std::string& message) {
    static const std::string kMarker = "(op_type:";
    static const std::string kName = ", node name: ";
    std::map<std::string, const model::Node*> by_label;
    for (const auto& n : graph_->nodes) by_label[label(n.get())] = n.get();
    bool attributed = false;
    for (size_t at = message.find(kMarker); at != std::string::npos;) {
      const size_t next = message.find(kMarker, at + 1);
      const std::string part = message.substr(at, next == std::string::npos ? std::string::npos : next - at);
      at = next;
      const size_t name_at = part.find(kName), close = part.find("): ");
      if (name_at == std::string::npos || close == std::string::npos || close < name_at) continue;
      const std::string name = part.substr(name_at + kName.size(), close - name_at - kName.size());
      std::string error = part.substr(close + 3);
      while (!error.empty() && error.back() == ' ') error.pop_back();
      if (!by_label.count(name) || error.find("instead is null") != std::string::npos) continue;
      attributed = true;
      if (failed_checker_.count(name)) continue;  // the checker's error for it says the same
      report_.add(newer_.empty() ? kError : kWarning, "onnx_shape_inference", error, {name});
    }
    if (!attributed) report_.add(kWarning, "onnx_shape_inference", message);
  }

  void check_output_shapes() {
    for (const auto& v : graph_->outputs) {
      if (!v) continue;
      if (v->dtype == DType::kUndefined && v->shape.unknown_rank)
        report_.add(kWarning, "parity", "Graph output '" + v->name + "' has no type or shape information");
      else if (v->shape.unknown_rank)
        report_.add(kWarning, "parity", "Graph output '" + v->name + "' has no shape information");
    }
  }

  void check_unused() {
    // Clean a second copy of the graph and report what went away.
    auto cleaned = model::Graph::from_model(model_);
    const auto nodes_before = cleaned->nodes;
    const auto inputs_before = cleaned->inputs;
    const auto inits_before = cleaned->initializers;
    cleaned->cleanup(/*remove_unused_inputs=*/true, /*recurse=*/false);
    auto kept = [](const std::vector<model::ValuePtr>& after, const model::ValuePtr& v) {
      return std::find(after.begin(), after.end(), v) != after.end();
    };
    std::set<std::string> initializer_names;
    for (const auto& v : inits_before) initializer_names.insert(v->name);
    for (const auto& v : inputs_before)
      if (!kept(cleaned->inputs, v) && !initializer_names.count(v->name))
        report_.add(kWarning, "onnx_graphsurgeon", "Input: '" + v->name + "' does not affect outputs, can be removed.");
    for (const auto& v : inits_before)
      if (!kept(cleaned->initializers, v))
        report_.add(kWarning, "onnx_graphsurgeon", "Initializer: '" + v->name + "' does not affect outputs, can be removed.");
    for (size_t i = 0; i < nodes_before.size(); ++i) {
      if (std::find(cleaned->nodes.begin(), cleaned->nodes.end(), nodes_before[i]) != cleaned->nodes.end()) continue;
      // Same position in the linted graph, which was built from the same model in the same order.
      const model::Node* original = graph_->nodes[i].get();
      report_.add(kWarning, "onnx_graphsurgeon", "Does not affect outputs, can be removed.", {label(original)});
    }
  }

  void check_kernels(const model::Graph& g) {
    // (domain, op, opset) -> nodes without a kernel; one entry per op keeps the report short.
    std::map<std::tuple<std::string, std::string, int64_t>, std::vector<std::string>> missing;
    collect_missing(g, missing);
    for (const auto& [key, nodes] : missing) {
      const auto& [domain, op, opset] = key;
      const auto versions = runtime::KernelRegistry::instance().versions(domain, op);
      std::string detail;
      if (!versions.empty()) {
        detail = " (kernels exist for opsets ";
        for (size_t i = 0; i < versions.size(); ++i) detail += (i ? ", " : "") + std::to_string(versions[i]);
        detail += ")";
      }
      report_.add(kWarning, "parity_runtime",
                  str_cat("parity's reference runtime has no kernel for ", domain.empty() ? "" : domain + ".", op,
                          " at opset ", opset, detail, "; the ref runner cannot run this model"),
                  nodes);
    }
  }

  void collect_missing(const model::Graph& g,
                       std::map<std::tuple<std::string, std::string, int64_t>, std::vector<std::string>>& missing) {
    for (const auto& n : g.nodes) {
      const std::string domain = normalize_domain(n->domain);
      const int64_t opset = graph_->opset(domain);
      if (opset > 0 && !is_unknown_operator(domain, n->op_type, opset) &&
          !runtime::KernelRegistry::instance().resolve(domain, n->op_type, static_cast<int>(opset)))
        missing[{domain, n->op_type, opset}].push_back(label(n.get()));
      for (const auto& [_, sub] : n->subgraphs) collect_missing(*sub, missing);
    }
  }

  void check_nondeterminism(const model::Graph& g) {
    static const std::set<std::string> kRandomOps = {"RandomNormal",      "RandomUniform", "RandomNormalLike",
                                                     "RandomUniformLike", "Multinomial",   "Bernoulli"};
    for (const auto& n : g.nodes) {
      if (normalize_domain(n->domain).empty() && kRandomOps.count(n->op_type)) {
        const bool seeded = n->attrs.count("seed") > 0;
        report_.add(kWarning, "parity",
                    n->op_type + " is non-deterministic: " +
                        (seeded ? std::string("its seed fixes the values for one runtime, but runtimes draw different values")
                                : std::string("outputs change from run to run and cannot be compared across runtimes")),
                    {label(n.get())});
      }
      for (const auto& [_, sub] : n->subgraphs) check_nondeterminism(*sub);
    }
  }

  // --load-input-data: the model run by parity's runtime on the loaded feed (Polygraphy runs ONNX
  // Runtime on its data loader's first feed).
  void check_inference(const TensorMap& feed) {
    std::vector<std::string> expected;
    for (const auto& v : graph_->inputs)
      if (v && v->is_variable()) expected.push_back(v->name);
    bool missing = false;
    for (const auto& name : expected)
      if (!feed.contains(name)) {
        report_.add(kError, "parity_runtime",
                    str_cat("graph input '", name, "' is not in the loaded input data (it has: ",
                            join_names(feed.names()), ")"));
        missing = true;
      }
    TensorMap used;
    for (const auto& name : feed.names()) {
      if (std::find(expected.begin(), expected.end(), name) == expected.end()) {
        report_.add(kWarning, "parity_runtime",
                    str_cat("the loaded input data has '", name, "', which is not a graph input; it is not used"));
        continue;
      }
      used.set(name, feed.at(name));
    }
    if (missing) return;
    try {
      const auto session = runtime::Session::create(model_.proto(), {}, model_.base_dir()).value();
      session.run(used);
      report_.add("info", "parity_runtime", "The model runs on the loaded input data");
    } catch (const Error& e) {
      std::vector<std::string> nodes;
      if (e.node())
        for (const auto& n : graph_->nodes)
          if (!n->name.empty() && n->name == *e.node()) {
            nodes.push_back(label(n.get()));
            break;
          }
      report_.add(kError, "parity_runtime", e.what(), std::move(nodes));
    }
  }

  // ONNX Runtime, as Polygraphy's lint runs it: the whole model first (when the checker found no
  // error); when that fails, node by node, each node alone in a model whose inputs are the values
  // its producers computed, so every node that fails independently is named. Nodes whose inputs an
  // earlier failure left uncomputed are not linted. Without ONNX Runtime the other checks stand and
  // one warning says so.
  void check_with_onnxruntime() {
    const runners::RunnerInfo* ort = runners::RunnerRegistry::instance().find("ort");
    if (!ort) {
      report_.add(kWarning, "parity", "ONNX Runtime checks skipped: this parity is built without ONNX Runtime");
      return;
    }
    if (const Status available = ort->availability({}); !available.ok()) {
      report_.add(kWarning, "parity", "ONNX Runtime checks skipped: " + available.message());
      return;
    }
    if (model_.external_data_ignored()) {
      report_.add(kWarning, "parity", "ONNX Runtime checks skipped: --ignore-external-data leaves the weights unloaded");
      return;
    }
    TensorMap feed;
    try {
      feed = onnxruntime_feed();
    } catch (const Error& e) {
      report_.add(kWarning, "parity", str_cat("ONNX Runtime checks skipped: no input data: ", e.what()));
      return;
    }
    const fs::path scratch = scratch_folder();
    try {
      lint_with_onnxruntime(*ort, feed, scratch);
    } catch (const Error& e) {
      // Parity could not prepare what ONNX Runtime needs: the other checks' entries stand.
      unlinted_.clear();
      report_.add(kWarning, "parity",
                  str_cat(e.code() == ErrorCode::kUnavailable ? "ONNX Runtime checks skipped: " : "ONNX Runtime checks stopped: ",
                          e.what()));
    } catch (...) {
      std::error_code ignored;
      fs::remove_all(scratch, ignored);
      throw;
    }
    std::error_code ignored;
    fs::remove_all(scratch, ignored);
  }

  // A model stamped with an opset newer than the loaded ONNX Runtime's is no fault of the model.
  static bool is_newer_than_onnxruntime(const std::string& message) {
    return message.find("ONNX Runtime only *guarantees* support for models stamped with official released onnx opset") !=
           std::string::npos;
  }

  static fs::path scratch_folder() {
    std::random_device rd;
    for (int attempt = 0;; ++attempt) {
      const fs::path dir = fs::temp_directory_path() / str_cat("parity-lint-", std::to_string(rd()));
      std::error_code ec;
      if (fs::create_directory(dir, ec)) return dir;
      PARITY_CHECK(attempt < 16, kRuntime, "cannot create a scratch folder in ", fs::temp_directory_path().string(),
                   ": ", ec.message());
    }
  }

  // The loaded feed (--load-input-data), else generated data as Polygraphy's data loader makes it.
  TensorMap onnxruntime_feed() const {
    if (inputs_) return inputs_->clone();
    TensorMetadata metadata;
    for (const auto& v : graph_->inputs)
      if (v && v->is_variable()) metadata.add(v->name, v->dtype, v->shape);
    compare::DataLoader loader;
    loader.input_metadata(metadata);
    return loader.generate(0);
  }

  void lint_with_onnxruntime(const runners::RunnerInfo& ort, const TensorMap& feed, const fs::path& scratch) {
    const bool checker_passed = std::none_of(report_.entries.begin(), report_.entries.end(), [](const LintEntry& e) {
      return e.level == kError && e.source == "onnx_checker";
    });
    if (checker_passed) {
      const fs::path whole = scratch / "model.onnx";
      onnx::ModelProto copy(model_.proto());
      inline_external_data(copy);
      write_proto(copy, whole);
      const auto error = run_onnxruntime(ort, whole, feed);
      if (!error) return;  // the whole model runs: nothing to report
      if (is_newer_than_onnxruntime(*error)) {
        report_.add(kWarning, "onnxruntime", prune_onnxruntime_message(*error));
        return;
      }
    }
    const auto& proto_graph = model_.proto().graph();
    std::map<std::string, const onnx::TensorProto*> initializers;
    for (const auto& t : proto_graph.initializer()) initializers[t.name()] = &t;
    TensorMap cache = feed.clone();
    std::set<std::string> failed, already_failing;
    for (const auto& e : report_.entries)
      if (e.level == kError && (e.source == "onnx_checker" || e.source == "parity"))
        already_failing.insert(e.nodes.begin(), e.nodes.end());
    for (int i = 0; i < proto_graph.node_size() && static_cast<size_t>(i) < graph_->nodes.size(); ++i) {
      const std::string name = label(graph_->nodes[static_cast<size_t>(i)].get());
      const onnx::NodeProto& node = proto_graph.node(i);
      TensorMap node_feed;
      bool ready = true;
      for (const auto& input : node.input()) {
        if (input.empty() || initializers.count(input)) continue;
        if (!cache.contains(input)) {
          ready = false;
          break;
        }
        node_feed.set(input, cache.at(input));
      }
      if (!ready) {
        unlinted_.insert(name);
        continue;
      }
      const fs::path file = scratch / str_cat("node_", i, ".onnx");
      write_proto(singleton_model(node, name, node_feed, initializers), file);
      TensorMap outputs;
      const auto error = run_onnxruntime(ort, file, node_feed, &outputs);
      if (!error) {
        for (const auto& out : outputs.names()) cache.set(out, outputs.at(out));
        continue;
      }
      const std::string message = prune_onnxruntime_message(*error);
      if (is_newer_than_onnxruntime(message)) {
        unlinted_.clear();  // every node would say the same: the other checks' verdicts stand
        report_.add(kWarning, "onnxruntime", message);
        return;
      }
      const bool custom_op = is_custom_op_message(message);
      if (!custom_op) failed.insert(name);
      if (already_failing.count(name)) continue;  // libonnx's checker or parity's schemas already say why
      report_.add(custom_op ? kWarning : kError, "onnxruntime", message, {name});
    }
    // libonnx's shape inference names the same nodes for the same reason; ONNX Runtime's entry stays.
    std::erase_if(report_.entries, [&](const LintEntry& e) {
      return e.source == "onnx_shape_inference" && e.level == kError && !e.nodes.empty() &&
             std::all_of(e.nodes.begin(), e.nodes.end(), [&](const std::string& n) { return failed.count(n) > 0; });
    });
  }

  // The node alone: its variable inputs are graph inputs typed as the values computed for them,
  // the initializers it reads come along (inline), its outputs are the graph's outputs.
  onnx::ModelProto singleton_model(const onnx::NodeProto& node, const std::string& name, const TensorMap& node_feed,
                                   const std::map<std::string, const onnx::TensorProto*>& initializers) const {
    onnx::ModelProto single;
    single.set_ir_version(model_.proto().ir_version());
    *single.mutable_opset_import() = model_.proto().opset_import();
    *single.mutable_functions() = model_.proto().functions();
    onnx::GraphProto* g = single.mutable_graph();
    g->set_name(name);
    onnx::NodeProto* copy = g->add_node();
    *copy = node;
    copy->set_name(name);
    std::set<std::string> added;
    for (const auto& input : node.input()) {
      if (input.empty() || !added.insert(input).second) continue;
      if (auto it = initializers.find(input); it != initializers.end()) {
        model::tensor_to_proto(model::tensor_from_proto(*it->second, model_.base_dir()), g->add_initializer(), input);
        continue;
      }
      const Tensor& value = node_feed.at(input);
      onnx::ValueInfoProto* info = g->add_input();
      info->set_name(input);
      auto* tensor_type = info->mutable_type()->mutable_tensor_type();
      tensor_type->set_elem_type(static_cast<int>(value.dtype()));
      auto* shape = tensor_type->mutable_shape();
      for (const int64_t d : value.shape()) shape->add_dim()->set_dim_value(d);
    }
    for (const auto& output : node.output())
      if (!output.empty()) g->add_output()->set_name(output);
    return single;
  }

  void inline_external_data(onnx::ModelProto& proto) const {
    for (auto& t : *proto.mutable_graph()->mutable_initializer())
      if (t.data_location() == onnx::TensorProto::EXTERNAL) {
        const Tensor values = model::tensor_from_proto(t, model_.base_dir());
        const std::string name = t.name();
        t.Clear();
        model::tensor_to_proto(values, &t, name);
      }
  }

  static void write_proto(const onnx::ModelProto& proto, const fs::path& path) {
    std::ofstream out(path, std::ios::binary);
    PARITY_CHECK(out && proto.SerializeToOstream(&out), kRuntime, "cannot write ", path.string());
  }

  // ONNX Runtime's message when it cannot build a session for the file or run it; nullopt when it ran.
  static std::optional<std::string> run_onnxruntime(const runners::RunnerInfo& ort, const fs::path& file,
                                                    const TensorMap& feed, TensorMap* outputs = nullptr) {
    try {
      auto runner = ort.create(runners::RunnerConfig{.model_path = file.string()});
      runners::ActiveRunner active(*runner);
      TensorMap result = runner->infer(feed, /*check_inputs=*/false);
      if (outputs) *outputs = result.clone();
      return std::nullopt;
    } catch (const Error& e) {
      if (e.code() == ErrorCode::kUnavailable) throw;  // no ONNX Runtime to ask
      std::string message = e.what();
      // The runner's own prefix names the scratch file; ONNX Runtime's words follow it.
      for (const std::string prefix : {str_cat("ONNX Runtime cannot load ", file.string(), ": "),
                                       std::string("ONNX Runtime failed to run the model: ")})
        if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
      // ORT names the file it loaded; Polygraphy hands it bytes, so its messages do not.
      if (const std::string loading = str_cat("Load model from ", file.string(), " failed:"); message.rfind(loading, 0) == 0)
        message.erase(0, loading.size());
      return message;
    }
  }

  // ONNX Runtime's formatting taken off its message, as Polygraphy prunes it, so that what is left
  // says what is wrong: "Node (MatMul_0) Op (MatMul) [ShapeInferenceError] Incompatible dimensions"
  // becomes " Incompatible dimensions".
  static std::string prune_onnxruntime_message(std::string message) {
    for (const char* noise : {"This is an invalid model. ", "Error: ", "Failed to load model with error: ",
                              "Exception caught: ", "Exception during loading: ", "\n"})
      for (size_t at = message.find(noise); at != std::string::npos; at = message.find(noise))
        message.erase(at, std::string(noise).size());
    std::replace(message.begin(), message.end(), '"', '`');
    static const std::vector<std::regex> kFormatting = {
        std::regex(R"(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d+ \[.*?\] )"),
        std::regex(R"(Node \(.*\) Op \(.*\) \[ShapeInferenceError\])"),
        std::regex(R"(.*/.*\.cc:\d+ onnxruntime::.*\(.*\))"),
        std::regex(R"(In Node, .*, Error )"),
        std::regex(R"(.*Status Message: )"),
    };
    for (const auto& pattern : kFormatting) {
      std::smatch m;
      if (std::regex_search(message, m, pattern, std::regex_constants::match_continuous))
        message = std::regex_replace(message, pattern, "");
    }
    return message;
  }

  void summarize() {
    std::set<std::string> failing;
    for (const auto& e : report_.entries)
      if (e.level == kError)
        for (const auto& n : e.nodes) failing.insert(n);
    for (const auto& n : graph_->nodes) {
      const std::string l = label(n.get());
      if (failing.count(l)) {
        if (std::find(report_.failing.begin(), report_.failing.end(), l) == report_.failing.end())
          report_.failing.push_back(l);
      } else if (!unlinted_.count(l) &&
                 std::find(report_.passing.begin(), report_.passing.end(), l) == report_.passing.end()) {
        report_.passing.push_back(l);
      }
    }
    // Failing nodes inside subgraphs are listed too.
    for (const auto& f : failing)
      if (std::find(report_.failing.begin(), report_.failing.end(), f) == report_.failing.end())
        report_.failing.push_back(f);
  }

  const Model& model_;
  LintReport& report_;
  std::shared_ptr<model::Graph> graph_;
  std::unordered_map<const model::Node*, std::string> labels_;
  std::vector<std::string> newer_;
  std::vector<model::UnknownOperator> unknown_;
  std::set<std::string> failed_checker_;  // nodes with an error from libonnx's checker
  // Nodes ONNX Runtime could not lint because an ancestor failed: neither passing nor failing.
  std::set<std::string> unlinted_;
  const TensorMap* inputs_ = nullptr;
  LintOptions options_;
};

}  // namespace

LintReport lint_model(const Model& model, const TensorMap* inputs, const LintOptions& options) {
  LintReport report;
  try {
    Linter(model, report, inputs, options).run();
  } catch (const Error& e) {
    // A model too broken to analyse further (e.g. its IR cannot be built): one error entry.
    report.add(kError, "parity", e.what());
  }
  return report;
}

LintReport lint_model_file(const fs::path& path, const fs::path& external_data_dir) {
  return lint_model_file(path, model::LoadOptions{.external_data_dir = external_data_dir});
}

LintReport lint_model_file(const fs::path& path, const model::LoadOptions& options, const TensorMap* inputs) {
  auto model = load_model(path, options);
  if (!model.is_ok()) {
    LintReport report;
    report.add(kError, "onnx_loader", model.error().what());
    return report;
  }
  return lint_model(model.value(), inputs);
}

}  // namespace parity::tools
