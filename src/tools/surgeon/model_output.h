// Writing an edited model (surgeon commands, convert): the guard against overwriting the input
// model or its weight files, and saving followed by libonnx's checker.
#pragma once

#include <filesystem>

#include "model/model.h"

namespace parity::tools {

/// kInvalidArgument when `out` (or, for external data in one file, its weight file) is the input
/// model's file or one of its weight files.
void check_not_overwriting_input(const model::Model& input, const std::filesystem::path& out,
                                 const model::SaveOptions& options);

/// Saves the model (with an empty side file for weightless tensors), then runs libonnx's checker on
/// the written file unless `check` is false or the model's external data was ignored; a checker
/// failure is an error (the file stays, so it can be inspected).
void save_checked_model(const model::Model& model, const std::filesystem::path& path,
                        const model::SaveOptions& options, bool check);

}  // namespace parity::tools
