// Internal: decoders of Polygraphy's JSON classes, shared by polygraphy_json.cpp and data_file.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/run_results.h"

namespace parity::polygraphy_json {

/// The "polygraphy_class" of an encoded object (or its legacy "__polygraphy_encoded_X" marker).
std::optional<std::string> class_of(const nlohmann::ordered_json& j);
[[noreturn]] void unknown_class(const std::string& cls, const std::string& what);
nlohmann::ordered_json parse(const std::string& text, const std::string& what);
Tensor decode_array(const nlohmann::ordered_json& j, const std::string& what);
TensorMap decode_tensor_map(const nlohmann::ordered_json& j, const std::string& what);
RunResults decode_run_results(const nlohmann::ordered_json& j, const std::string& what);
std::vector<TensorMap> decode_inputs(const nlohmann::ordered_json& j, const std::string& what);

}  // namespace parity::polygraphy_json
