#include "model/known_operators.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <map>
#include <tuple>

#include "core/status.h"
#include "model/model.h"
#include "model/schemas/newer_onnx.h"

namespace parity::model {
namespace {

// ONNX's own domains: "" (ai.onnx) and the ai.onnx.* ones libonnx and parity's schemas register.
bool is_onnx_domain(const std::string& domain) { return domain.empty() || domain.rfind("ai.onnx.", 0) == 0; }

std::string display_domain(const std::string& domain) { return domain.empty() ? "ai.onnx" : domain; }

std::string node_label(const onnx::NodeProto& node, const std::string& domain) {
  const std::string op = domain.empty() ? node.op_type() : domain + "::" + node.op_type();
  if (!node.name().empty()) return op + " node '" + node.name() + "'";
  for (const auto& output : node.output())
    if (!output.empty()) return op + " node (output '" + output + "')";
  return op + " node";
}

// Why no schema covers `op` of `domain` at `opset` (the newest opset of the domain this build knows
// is `newest_opset`), or "" when one does.
std::string unknown_reason(const std::string& op, const std::string& domain, int64_t opset, int newest_opset) {
  const onnx::OpSchema* newest = onnx::OpSchemaRegistry::Schema(op, domain);
  const std::string newest_text = newest ? str_cat("the newest version parity knows is ", newest->since_version())
                                         : std::string("parity knows no version of it");
  const std::string where = display_domain(domain);
  if (opset > newest_opset)
    return str_cat("op '", op, "' at ", where, " opset ", opset, " is newer than parity knows (it knows ", where,
                   " up to opset ", newest_opset, " as of ONNX ", kNewestKnownOnnxRelease, "); ", newest_text);
  if (newest == nullptr)
    return str_cat("op '", op, "' is no ", where, " operator parity knows (opset ", opset, "; ONNX ",
                   kNewestKnownOnnxRelease, " defines ", where, " up to opset ", newest_opset, "); ", newest_text);
  if (onnx::OpSchemaRegistry::Schema(op, static_cast<int>(opset), domain) == nullptr)
    return str_cat("op '", op, "' does not exist at ", where, " opset ", opset, " (it was introduced later); ",
                   newest_text);
  return {};
}

class UnknownOperatorFinder {
 public:
  explicit UnknownOperatorFinder(const onnx::ModelProto& model) {
    const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    for (const auto& import : model.opset_import()) {
      const std::string domain = normalize_domain(import.domain());
      const auto range = ranges.find(domain.empty() ? std::string(onnx::ONNX_DOMAIN) : domain);
      if (is_onnx_domain(domain) && range != ranges.end()) known_[domain] = {import.version(), range->second.second};
    }
  }

  void visit(const onnx::GraphProto& graph) {
    for (const auto& node : graph.node()) {
      visit(node);
      for (const auto& attribute : node.attribute()) {
        if (attribute.has_g()) visit(attribute.g());
        for (const auto& g : attribute.graphs()) visit(g);
      }
    }
  }

  std::vector<UnknownOperator> found() && { return std::move(found_); }

 private:
  void visit(const onnx::NodeProto& node) {
    const std::string domain = normalize_domain(node.domain());
    const auto import = known_.find(domain);
    if (import == known_.end()) return;  // a custom domain, or one the model does not import (the checker says so)
    const auto [opset, newest_opset] = import->second;
    const auto key = std::make_tuple(domain, node.op_type(), opset);
    const auto seen = index_.find(key);
    if (seen != index_.end()) {
      if (seen->second >= 0) found_[static_cast<size_t>(seen->second)].nodes.push_back(node.name());
      return;
    }
    const std::string reason = unknown_reason(node.op_type(), domain, opset, newest_opset);
    if (reason.empty()) {
      index_[key] = -1;
      return;
    }
    index_[key] = static_cast<int>(found_.size());
    found_.push_back({node.op_type(), domain, opset, {node.name()}, node_label(node, domain) + ": " + reason});
  }

  std::map<std::string, std::pair<int64_t, int>> known_;  // domain -> (model's opset, newest this build knows)
  std::map<std::tuple<std::string, std::string, int64_t>, int> index_;  // -> index in found_, -1 when known
  std::vector<UnknownOperator> found_;
};

}  // namespace

std::vector<UnknownOperator> unknown_operators(const onnx::ModelProto& model) {
  register_newer_onnx_schemas();
  UnknownOperatorFinder finder(model);
  finder.visit(model.graph());
  return std::move(finder).found();
}

}  // namespace parity::model
