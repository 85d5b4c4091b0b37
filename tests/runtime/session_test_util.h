// Helpers for tests that compare the kernel tiers and plan rewrites through whole sessions.
#pragma once

#include <string>
#include <vector>

#include "runtime/session.h"

namespace parity::testing {

/// A session over an in-memory model with the given kernel tier; throws the creation error.
inline runtime::Session session_with_kernels(const onnx::ModelProto& model, runtime::KernelTier tier) {
  runtime::SessionOptions options;
  options.kernels = tier;
  auto session = runtime::Session::create(model, options);
  if (!session) throw session.error();
  return std::move(session).value();
}

/// Labels of the nodes a plain run executes, in order (from RunOptions.profile): what fused or
/// folded plans really run.
inline std::vector<std::string> executed_node_labels(const runtime::Session& session, const TensorMap& feed) {
  std::vector<runtime::NodeTiming> profile;
  runtime::RunOptions options;
  options.profile = &profile;
  session.run(feed, options);
  std::vector<std::string> labels;
  for (const auto& p : profile) labels.push_back(p.label);
  return labels;
}

/// True when some label contains `text`.
inline bool any_label_contains(const std::vector<std::string>& labels, const std::string& text) {
  for (const auto& label : labels)
    if (label.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace parity::testing
