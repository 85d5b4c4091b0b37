// `parity template onnx-graph|data-loader`: C++ starting points, the counterpart of Polygraphy's
// Python templates (`template onnx-gs`, data loader scripts). Each is a small program against
// parity's installed C++ API plus a CMake snippet that builds it (the same snippet as `run
// --gen-script`), so users edit a program that already builds and runs.
#pragma once

#include <optional>
#include <string>

#include "core/metadata.h"
#include "tools/run_script.h"

namespace parity::tools {

/// A program that loads a model into parity's graph IR, calls edit_graph() (the place to edit; it
/// prints the nodes as given), cleans up, sorts and saves: `PROGRAM [MODEL] [OUTPUT]`. With a model,
/// its path is the default MODEL and its inputs and outputs are listed in a comment.
RunScript onnx_graph_template(const std::optional<std::string>& model_path, const std::optional<TensorMetadata>& inputs,
                              const std::optional<TensorMetadata>& outputs, const std::string& target);

/// A program whose load_data() yields `iterations` feeds and writes them as a Polygraphy inputs
/// JSON (`PROGRAM [OUTPUT=inputs.json]`) for `parity run --load-inputs`. With the model's inputs,
/// every input gets a tensor of its dtype and shape (dynamic dimensions 1), filled with a
/// placeholder ramp; without them, one example float input "x".
RunScript data_loader_template(const std::optional<TensorMetadata>& inputs, int iterations, const std::string& target);

}  // namespace parity::tools
