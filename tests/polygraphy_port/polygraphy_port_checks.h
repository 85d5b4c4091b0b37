// Checks of the ported Polygraphy CLI cases (tests/data/polygraphy_port/cases_*.yaml): each takes the
// case's YAML node and the scratch folder, and returns what failed (empty when it holds).
#pragma once

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string>
#include <vector>

namespace parity::testing::polygraphy_port {

/// Replaces the case files' placeholders ($MODELS, $INPUTS, $PARITY, $CHECKER, $PYTHON, $TMP).
std::string expand(const std::string& text, const std::filesystem::path& scratch);

/// One check of a case's `checks` list (a map with one key: nonempty, exists, absent, onnx, json,
/// results, feeds, plugin_config, same_file, differ_if_exists). Failures are appended to `failures`.
void run_check(const YAML::Node& check, const std::filesystem::path& scratch, std::vector<std::string>& failures);

/// Whether Polygraphy's was_shape_inference_run holds: the log says shape inference completed and
/// every value_info of `model` has a shape.
bool shape_inference_was_run(const std::string& output, const std::filesystem::path& model);

}  // namespace parity::testing::polygraphy_port
