// Finding tensor types by running the model in parity's own runtime (the fallback of `auto`
// fields when shape inference cannot tell).
#pragma once

#include <string>
#include <vector>

#include "core/metadata.h"
#include "onnx/model.h"

namespace parity::transforms {

/// Runs the model on generated inputs (Polygraphy's default data: seed 1, dynamic dims 1) and
/// returns the dtypes and observed shapes of the named tensors. Errors of the run propagate.
TensorMetadata resolve_types_by_running(const onnx_io::Model& model, const std::vector<std::string>& names);

}  // namespace parity::transforms
