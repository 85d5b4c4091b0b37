// Loading an ONNX file to run it, at disk speed: the file is mapped, the protobuf is parsed
// without the main graph's large initializer bytes (only the rest of the file is read for that),
// and those initializers are read once, straight from the file into their tensors' memory.
// Protobuf would copy every weight byte into a string first, and the planner again into a tensor.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <unordered_map>

#include "core/status.h"
#include "core/tensor.h"

#include "model/onnx_fwd.h"

namespace parity::model {

/// A model loaded by load_model_mapped.
struct MappedModel {
  /// The model, except that the main graph's initializers listed in `initializers` carry no data
  /// (their raw_data was left out of the parse; name, data type and dims are there).
  std::shared_ptr<onnx::ModelProto> proto;
  /// Those initializers' values by name.
  std::shared_ptr<const std::unordered_map<std::string, Tensor>> initializers;
};

/// Main-graph initializers stored inline with at least this many bytes of raw_data are left out
/// of the parse (smaller ones cost nothing to copy, and shape inference may read their values).
inline constexpr size_t kMappedInitializerMinBytes = 4096;

/// Loads `path` as above. The file may exceed protobuf's 2 GiB message limit as long as what is
/// left after taking the large initializers out does not. Files whose layout it does not expect
/// (a graph field given twice, an initializer with two raw_data fields) are parsed whole, with
/// no initializer taken out. Errors: kNotFound, kInvalidModel naming the file.
Result<MappedModel> load_model_mapped(const std::filesystem::path& path,
                                      size_t min_bytes = kMappedInitializerMinBytes);

}  // namespace parity::model
