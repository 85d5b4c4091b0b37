// Polygraphy's JSON files (polygraphy/json/serde.py): RunResults from `run --save-outputs` and
// input lists from `run --save-inputs`. Arrays are base64-encoded .npy files; written files are
// byte-for-byte what Polygraphy writes for the same data.
#pragma once

#include <string>
#include <vector>

#include "core/run_results.h"
#include "core/tensor_map.h"

namespace parity {

/// Reads a RunResults file. Throws kInvalidModel for malformed JSON, a file that holds something
/// else (e.g. an inputs list) or an unknown "polygraphy_class" (named in the message).
RunResults read_run_results(const std::string& path);
/// Writes a RunResults file (4-space indent, "polygraphy_class" last, arrays as LazyArray).
void write_run_results(const std::string& path, const RunResults& results);

/// Reads an inputs file: a JSON list with one {name: ndarray} object per iteration (a single
/// object is read as one iteration).
std::vector<TensorMap> read_inputs_json(const std::string& path);
/// Writes an inputs file as Polygraphy's --save-inputs does.
void write_inputs_json(const std::string& path, const std::vector<TensorMap>& iterations);
/// Reads several inputs files and concatenates their iterations (Polygraphy's --load-inputs).
std::vector<TensorMap> read_inputs_json(const std::vector<std::string>& paths);

// In-memory forms; `what` names the source in error messages.
/// Parses RunResults JSON text, with read_run_results()'s errors.
RunResults run_results_from_json(const std::string& text, const std::string& what = "JSON");
std::string run_results_to_json(const RunResults& results);  ///< RunResults JSON text, as write_run_results() writes it.
/// Parses inputs-list JSON text, with read_inputs_json()'s errors.
std::vector<TensorMap> inputs_from_json(const std::string& text, const std::string& what = "JSON");
std::string inputs_to_json(const std::vector<TensorMap>& iterations);  ///< Inputs-list JSON text, as write_inputs_json() writes it.

}  // namespace parity
