// Opset conversion through libonnx's version converter, safe for models whose weights are external
// or larger than protobuf's 2 GiB limit: big weights never pass through the converter.
#pragma once

#include <cstdint>

#include "model/model.h"

namespace parity::model::transforms {

/// Converts the default-domain opset to target_opset in place. Unsupported conversions throw
/// kUnsupported with libonnx's reason.
void convert_opset(model::Model& model, int64_t target_opset);

/// Runs libonnx's checker on a saved model file (external data resolved next to it; see
/// model/checker.h for models newer than libonnx). Throws kInvalidModel with the first error;
/// logs what libonnx is too old to check as warnings.
void check_saved_model(const std::filesystem::path& path);

}  // namespace parity::model::transforms
