// One loader for every data file parity and Polygraphy exchange: RunResults JSON, inputs JSON,
// .npy and .npz, recognized by content (extension only as a tie-breaker).
#pragma once

#include <string>
#include <vector>

#include "core/run_results.h"
#include "core/tensor_map.h"

namespace parity {

using TensorMapList = std::vector<TensorMap>;

enum class DataFileKind { kRunResults, kInputsJson, kNpy, kNpz };

/// "RunResults JSON", "inputs JSON", ".npy", ".npz".
const char* data_file_kind_name(DataFileKind kind);

/// A loaded data file: RunResults keep their runners; everything else is a list of iterations.
struct DataFile {
  DataFileKind kind = DataFileKind::kInputsJson;
  RunResults run_results;    // kRunResults only
  TensorMapList iterations;  // the other kinds (.npy/.npz: one iteration)
};

/// Tells what a file holds by reading it. Throws kInvalidModel when it is none of the kinds.
DataFileKind detect_data_file(const std::string& path);

/// Loads any supported data file. A .npy becomes one tensor named after the file's stem.
DataFile load_data(const std::string& path);

/// Loads any supported data file as a flat list of tensor maps: for RunResults, every
/// iteration of every runner in order; otherwise the file's iterations.
TensorMapList load_data_file(const std::string& path);

}  // namespace parity
