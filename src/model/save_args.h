// The ONNX save options every tool that writes a model shares (Polygraphy's OnnxSaveArgs):
// --external-data, --external-data-location, --external-data-size-threshold,
// --no-save-all-tensors-to-one-file. It lives in model/ because its parsed value is the model
// layer's SaveOptions; sizes are parsed by core/text.h like every other size.
#pragma once

#include "model/model.h"
#include "options/group.h"

namespace parity::model {

/// Option group: add_to() defines the save options (in a "Model saving" help group), parse()
/// turns the parsed values into SaveOptions (bad sizes throw kInvalidArgument naming the option).
class ModelSaveArgs : public options::Group<SaveOptions> {
 public:
  ModelSaveArgs();
};

}  // namespace parity::model
