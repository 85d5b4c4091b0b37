#include "model/checker.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <set>
#include <unordered_map>

#include "core/logger.h"
#include "model/schemas/newer_onnx.h"

namespace parity::model {

namespace fs = std::filesystem;

namespace {

// libonnx's own spelling, e.g. "No Op registered for Gelu with domain_version of 20".
constexpr std::string_view kNoSchema = "No Op registered for ";

class NodeByNodeChecker {
 public:
  NodeByNodeChecker(const onnx::ModelProto& model, const fs::path& model_dir, const CheckerOptions& options,
                    std::vector<CheckerFinding>& out)
      : model_(model), options_(options), out_(out) {
    newer_ir_ = model.ir_version() > max_known_ir_version();
    ctx_.set_ir_version(static_cast<int>(std::min<int64_t>(model.ir_version(), max_known_ir_version())));
    std::unordered_map<std::string, int> opsets;
    for (const auto& op : model.opset_import()) opsets[op.domain()] = static_cast<int>(op.version());
    ctx_.set_opset_imports(opsets);
    ctx_.set_model_dir(model_dir.string());
  }

  void run(const onnx::GraphProto& graph) {
    check_model_fields();
    if (model_.ir_version() <= 0) return;
    for (const auto& v : graph.input()) guard(-1, [&] { onnx::checker::check_value_info(v, ctx_); });
    for (const auto& v : graph.output()) guard(-1, [&] { onnx::checker::check_value_info(output_info(v), ctx_); });
    for (const auto& v : graph.input()) scope_.add(v.name());
    for (const auto& t : graph.initializer()) {
      guard(-1, [&] { onnx::checker::check_tensor(t, ctx_); });
      scope_.add(t.name());
    }
    for (const auto& s : graph.sparse_initializer()) {
      guard(-1, [&] { onnx::checker::check_sparse_tensor(s, ctx_); });
      scope_.add(s.values().name());
    }
    for (int i = 0; i < graph.node_size(); ++i) check_node(graph.node(i), i);
    if (model_.ir_version() >= 8)
      guard(-1, [&] { onnx::checker::check_model_local_functions(model_, ctx_, onnx::checker::LexicalScopeContext()); });
  }

 private:
  // libonnx requires a shape on every tensor value; Polygraphy gives shapeless graph outputs an
  // empty one before checking, since a model may leave output shapes unknown.
  onnx::ValueInfoProto output_info(const onnx::ValueInfoProto& v) const {
    onnx::ValueInfoProto copy(v);
    if (options_.tolerate_shapeless_outputs && copy.type().has_tensor_type() && !copy.type().tensor_type().has_shape())
      copy.mutable_type()->mutable_tensor_type()->mutable_shape();
    return copy;
  }

  void check_model_fields() {
    if (model_.ir_version() <= 0) {
      add(true, "The model does not have an ir_version set properly.", -1);
      return;
    }
    if (newer_ir_)
      add(false, str_cat("IR version ", model_.ir_version(), " is newer than libonnx's checker knows (",
                         max_known_ir_version(), "): checked with IR ", max_known_ir_version(), "'s rules"), -1);
    if (model_.ir_version() >= 3 && model_.opset_import_size() == 0)
      add(true, "model with IR version >= 3 must specify opset_import for ONNX", -1);
    std::set<std::string> keys;
    for (const auto& kv : model_.metadata_props())
      if (!keys.insert(kv.key()).second) add(true, "Your model has duplicate keys '" + kv.key() + "' in metadata_props.", -1);
  }

  // Mirrors libonnx's check_graph for one node (inputs defined earlier, the node itself, outputs
  // assigned once), so the graph goes on being checked after a failing node.
  void check_node(const onnx::NodeProto& node, int index) {
    for (const auto& input : node.input()) {
      if (input.empty() || scope_.this_or_ancestor_graph_has(input)) continue;
      add(true, str_cat("Nodes in a graph must be topologically sorted, however input '", input, "' of node '",
                        node.name(), "' (", node.op_type(), ") is not output of any previous nodes."), index);
    }
    guard(index, [&] { onnx::checker::check_node(node, ctx_, scope_); }, opset_beyond_library(node.domain()));
    for (const auto& output : node.output()) {
      if (output.empty()) continue;
      if (scope_.this_or_ancestor_graph_has(output))
        add(true, str_cat("Graph must be in single static assignment (SSA) form, however '", output,
                          "' has been used as output names multiple times."), index);
      scope_.add(output);
    }
  }

  // The model's opset of a domain when libonnx knows only older ones; 0 otherwise.
  int64_t opset_beyond_library(const std::string& domain) const {
    for (const auto& op : model_.opset_import()) {
      if (normalize_domain(op.domain()) != normalize_domain(domain)) continue;
      const int64_t known = max_known_opset(op.domain());
      return known > 0 && op.version() > known ? op.version() : 0;
    }
    return 0;
  }

  // newer_opset: the node's domain is imported at an opset libonnx does not know, so libonnx
  // verifies the node against an older schema (e.g. Split-13 for an opset-20 Split with
  // num_outputs) and its complaints cannot tell a bad node from a newer operator version.
  template <typename Fn>
  void guard(int node, Fn&& fn, int64_t newer_opset = 0) {
    try {
      fn();
    } catch (const std::exception& e) {
      const std::string message = e.what();
      std::string why_unjudged = beyond_library(message);
      if (why_unjudged.empty() && newer_opset > 0)
        why_unjudged = str_cat(message.substr(0, message.find('\n')), " (checked against libonnx's schema of an older opset: the model's opset ",
                               newer_opset, " may define this operator differently)");
      if (why_unjudged.empty()) add(true, message, node);
      else add(false, why_unjudged, node);
    }
  }

  // Non-empty when the message only says this libonnx is older than the model: the reason, as a
  // warning. A missing schema at an opset libonnx knows stays an error (no such operator).
  std::string beyond_library(const std::string& message) const {
    if (message.rfind(kNoSchema, 0) == 0) {
      for (const auto& op : model_.opset_import()) {
        const int64_t known = max_known_opset(op.domain());
        if (known > 0 && op.version() > known && message.find(str_cat("domain_version of ", op.version())) != std::string::npos)
          return str_cat(message.substr(0, message.find('\n')), ": this build's ONNX schemas go up to opset ", known,
                         ", so this operator is not checked");
      }
    }
    if (newer_ir_ && message.find("Unrecognized data_type") != std::string::npos)
      return message + " (a type of IR version " + std::to_string(model_.ir_version()) + ", unknown to libonnx)";
    return {};
  }

  void add(bool error, std::string message, int node) { out_.push_back({error, std::move(message), node}); }

  const onnx::ModelProto& model_;
  const CheckerOptions& options_;
  std::vector<CheckerFinding>& out_;
  onnx::checker::CheckerContext ctx_;
  onnx::checker::LexicalScopeContext scope_;
  bool newer_ir_ = false;
};

}  // namespace

std::vector<CheckerFinding> check_model_proto(const onnx::ModelProto& model, const fs::path& model_dir,
                                              const CheckerOptions& options) {
  register_newer_onnx_schemas();
  std::vector<CheckerFinding> findings;
  NodeByNodeChecker(model, model_dir, options, findings).run(model.graph());
  return findings;
}

std::vector<std::string> check_model_file(const fs::path& path) {
  // Reading the file back would repeat load_model's warnings about newer IR/opsets, already given
  // when the model was loaded or written.
  Logger& log = logger();
  const Severity before = log.severity();
  log.set_severity(std::max(before, Severity::kError));
  auto loaded = load_model(path);
  log.set_severity(before);
  PARITY_CHECK(loaded.is_ok(), kInvalidModel, "'", path.string(), "' cannot be read back: ",
               loaded.is_ok() ? "" : loaded.error().what());
  const Model& model = loaded.value();
  std::vector<std::string> warnings;
  for (const auto& f : check_model_proto(model.proto(), model.base_dir())) {
    const std::string where =
        f.node >= 0 ? str_cat(" (node ", f.node, " '", model.proto().graph().node(f.node).name(), "')") : "";
    PARITY_CHECK(!f.error, kInvalidModel, "'", path.string(), "' fails libonnx's checker", where, ": ", f.message);
    // Loading already warned that the IR version is newer than libonnx; say it once.
    if (f.node < 0 && f.message.rfind("IR version ", 0) == 0) continue;
    warnings.push_back(f.message + where);
  }
  return warnings;
}

}  // namespace parity::model
