// libonnx's checker, run so that a checker older than the model never fails a good model: a model
// whose IR version or opsets are newer than the linked libonnx is checked with the newest rules
// libonnx has (what only a newer checker could judge becomes a warning), and the graph is checked
// node by node so every failing node is named, as Polygraphy's lint does.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "model/model.h"

namespace parity::model {

/// One finding of the checker.
struct CheckerFinding {
  bool error = false;    // false: a warning (e.g. something only a newer libonnx could check)
  std::string message;
  int node = -1;         // index of the failing node in the main graph; -1 for model-wide findings
};

struct CheckerOptions {
  /// Give graph outputs without a shape an empty one before checking, as Polygraphy does: libonnx
  /// requires the field, but a missing output shape is not an error in a model.
  bool tolerate_shapeless_outputs = true;
};

/// Checks a model with libonnx (external data resolved against model_dir). Never throws for
/// problems in the model: they are findings. Nodes are checked one by one, so one bad node does
/// not hide the others.
std::vector<CheckerFinding> check_model_proto(const onnx::ModelProto& model, const std::filesystem::path& model_dir,
                                              const CheckerOptions& options = {});

/// Checks a saved model file: throws kInvalidModel naming the file and the first error; returns
/// the warnings (newer IR/opsets than libonnx knows), which callers log.
std::vector<std::string> check_model_file(const std::filesystem::path& path);

}  // namespace parity::model
