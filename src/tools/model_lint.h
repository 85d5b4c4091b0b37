// Model linting (`parity check lint`): libonnx's checker per node and per model, plus parity's own
// lints: duplicate names, cycles, unused inputs/initializers/nodes, graph outputs without shapes,
// ops the reference runtime has no kernel for, non-deterministic ops; and, when ONNX Runtime can be
// loaded, Polygraphy's ONNX Runtime check (the whole model, else node by node: "onnxruntime"
// entries; nodes an earlier failure left without inputs are neither passing nor failing). The report has Polygraphy's
// JSON layout: {"summary": {"passing": [...], "failing": [...]}, "lint_entries": [...]}.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/tensor_map.h"
#include "model/model.h"

namespace parity::tools {

struct LintEntry {
  std::string level;   // "exception" (an error), "warning" or "info"
  std::string source;  // "onnx_loader", "onnx_checker", "onnx_shape_inference", "onnxruntime", "parity", "parity_runtime"
  std::string message;
  std::vector<std::string> nodes;  // related nodes; empty for model-wide entries
};

struct LintReport {
  std::vector<LintEntry> entries;
  std::vector<std::string> passing;  // nodes with no error
  std::vector<std::string> failing;  // nodes with at least one error

  void add(std::string level, std::string source, std::string message, std::vector<std::string> nodes = {});
  bool has_errors() const;
  size_t count(const std::string& level) const;
  /// The JSON report (indented by 4 like Polygraphy's).
  std::string to_json() const;
};

/// Lints a loaded model. Never throws for problems in the model: they become entries. With inputs
/// (Polygraphy's --load-input-data), the model is also run by parity's runtime on them: a graph
/// input missing from them, or a failing run, is an error ("parity_runtime", naming the node the
/// runtime names); data for tensors that are no graph inputs is a warning.
/// What a lint runs besides the model checks.
struct LintOptions {
  /// Polygraphy's ONNX Runtime check ("onnxruntime" entries) when ONNX Runtime is available. It runs
  /// ONNX Runtime in this process, so a model that crashes ONNX Runtime crashes the lint too.
  bool onnxruntime = true;
};

LintReport lint_model(const model::Model& model, const TensorMap* inputs = nullptr, const LintOptions& options = {});
/// Loads and lints; a file that cannot be loaded becomes one "onnx_loader" exception entry.
/// External data is looked up in external_data_dir (empty: the model's folder).
LintReport lint_model_file(const std::filesystem::path& path, const std::filesystem::path& external_data_dir = {});
/// Same with every load option (--ignore-external-data: tensors whose weights are missing are not
/// reported).
LintReport lint_model_file(const std::filesystem::path& path, const model::LoadOptions& options,
                           const TensorMap* inputs = nullptr);

}  // namespace parity::tools
