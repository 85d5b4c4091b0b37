// The ONNX save options every tool that writes a model shares (Polygraphy's OnnxSaveArgs):
// --external-data, --external-data-location, --external-data-size-threshold,
// --no-save-all-tensors-to-one-file. A command adds them with add_model_save_options() and turns
// the parsed values into SaveOptions with model_save_options().
#pragma once

#include <cstdint>
#include <string>

#include "cli/args.h"
#include "onnx/model.h"

namespace parity::onnx_io {

/// Adds the save options (in a "Model saving" help group) to a command's parser.
void add_model_save_options(cli::ArgParser& parser);
/// SaveOptions from parsed arguments; bad sizes throw kInvalidArgument naming the option.
SaveOptions model_save_options(const cli::Args& args);
/// Parses "1024", "4K", "1.5M", "2G" (binary multiples) into bytes.
uint64_t parse_size(const std::string& text, const std::string& what);

}  // namespace parity::onnx_io
