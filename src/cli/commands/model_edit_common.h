// Shared pieces of the commands that write models (surgeon *, convert): the model argument, the
// output options (-o, --force, external data), loading, the overwrite guard and saving with a
// libonnx check.
#pragma once

#include <filesystem>

#include <string>
#include <vector>

#include "options/args.h"
#include "model/graph.h"
#include "model/model.h"
#include "tools/plugin_patterns.h"

namespace parity::cli::model_edit {

/// Adds the positional MODEL argument with --external-data-dir and --ignore-external-data.
void add_model_argument(options::ArgParser& parser);
/// Adds --ignore-external-data (Polygraphy's: load the structure without external weights).
void add_ignore_external_data_option(options::ArgParser& parser);
/// Adds Polygraphy's --model-type (onnx, engine, and the TensorFlow/TensorRT types it refuses).
void add_model_type_option(options::ArgParser& parser);
/// With --model-type: `path` must be of that type (engine: a parity plan, whatever its name;
/// onnx: not a plan); TensorFlow and TensorRT-only types are refused with the closest parity
/// way. Throws kInvalidArgument.
void check_model_type(const options::Args& args, const std::string& path);
/// --external-data-dir / --ignore-external-data as load options (both at once is kInvalidArgument).
model::LoadOptions load_options(const options::Args& args);
/// Adds -o/--output, --force and the external-data save options.
void add_output_options(options::ArgParser& parser);
/// Loads the model named by the MODEL argument (errors carry the path).
model::Model load_input(const options::Args& args);
/// The -o path, refused (kInvalidArgument) when it or its external-data file is the input model's
/// file or one of its weight files, unless --force.
std::filesystem::path output_path(const options::Args& args, const model::Model& input);
/// Save options from --external-data and friends.
model::SaveOptions save_options(const options::Args& args);
/// Saves the model, then runs libonnx's checker on the written file unless check is false; a
/// checker failure is an error (the file stays, so it can be inspected).
void save_output(const model::Model& model, const std::filesystem::path& path, const options::Args& args, bool check = true);

/// Adds --verify [N], --verify-atol and --verify-rtol; `what` names the rewritten model in the help
/// ("sanitized").
void add_verify_options(options::ArgParser& parser, const std::string& what);
/// With --verify: runs `rewritten` against `original` on N seeded inputs (tools/verify.h) and logs
/// the verdict. kExitPassed when --verify is absent or every shared output agrees, else kExitFailed;
/// bad counts or tolerances are kInvalidArgument.
int verify_rewritten(const model::Model& original, const model::Model& rewritten, const options::Args& args,
                     const std::string& what);

/// Adds --plugin-dir (required) and --include / --exclude (plugin list and match).
void add_plugin_selection_options(options::ArgParser& parser);
/// Loads the selected plugins' patterns and matches them in the model, logging the counts per
/// plugin as Polygraphy does.
std::vector<tools::PluginSubstitutions> match_selected_plugins(const model::Model& model, const options::Args& args);

}  // namespace parity::cli::model_edit
