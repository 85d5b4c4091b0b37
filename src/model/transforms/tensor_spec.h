// Tensor boundary specs of the surgeon tools: "name:shape:dtype" for inputs and "name:dtype" for
// outputs (Polygraphy's syntax), where shape and dtype may be `auto`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/metadata.h"

namespace parity::model::transforms {

struct TensorSpec {
  std::string name;
  std::optional<DType> dtype;     // nullopt = auto
  std::optional<DimShape> shape;  // nullopt = auto
};

/// Parses "name:[1,3,'N',-1]:float32", "name:auto:auto" or "name" (everything auto). Dimensions
/// may be integers, -1 / '?' (dynamic) or symbol names. Throws kInvalidArgument naming the option.
TensorSpec parse_input_spec(const std::string& text, const std::string& option = "--inputs");
/// Parses "name:float32", "name:auto" or "name".
TensorSpec parse_output_spec(const std::string& text, const std::string& option = "--outputs");

}  // namespace parity::model::transforms
