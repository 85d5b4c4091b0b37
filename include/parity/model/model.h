// ONNX model files: load from a path or bytes (external data stays in its side files and is mapped
// lazily), save with optional external data, and report what libonnx knows about the model's opsets.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

#include "model/onnx_fwd.h"

namespace parity::model {

/// An ONNX model: the ModelProto plus the folder its external data is relative to.
///
/// Tensors stored as external data stay references in the proto; tensor_from_proto(t, base_dir())
/// maps them on demand. Copies are deep but cheap for models whose weights are external.
class Model {
 public:
  Model();  ///< An empty ModelProto, no base folder.
  /// Takes `proto` (an empty one when null) with external data relative to `base_dir`.
  explicit Model(std::unique_ptr<onnx::ModelProto> proto, std::filesystem::path base_dir = {});
  ~Model();
  Model(Model&&) noexcept;  ///< Moves the proto and its folders.
  Model& operator=(Model&&) noexcept;  ///< Moves the proto and its folders.
  Model(const Model& other);  ///< Deep copy of the proto (external weights stay references).
  Model& operator=(const Model& other);  ///< Deep copy, as the copy constructor.

  onnx::ModelProto& proto() { return *proto_; }  ///< The ModelProto itself.
  const onnx::ModelProto& proto() const { return *proto_; }  ///< The ModelProto itself, read-only.
  /// Folder that external-data locations are relative to (the model file's folder).
  const std::filesystem::path& base_dir() const { return base_dir_; }
  void set_base_dir(std::filesystem::path dir) { base_dir_ = std::move(dir); }  ///< Changes the folder external data is relative to.
  /// The file the model was loaded from; empty when it came from bytes or was built in memory.
  const std::filesystem::path& path() const { return path_; }
  void set_path(std::filesystem::path path) { path_ = std::move(path); }  ///< Records the file the model came from.

  /// Opset imported for a domain ("" or "ai.onnx" = default domain); 0 when not imported.
  int64_t opset(const std::string& domain = "") const;
  /// True when some tensor (initializer or attribute, in any subgraph) is stored externally.
  bool has_external_data() const;
  /// True when the model was loaded with LoadOptions::ignore_external_data: its external tensors
  /// were not checked, may be missing, and are saved as the same references.
  bool external_data_ignored() const { return external_data_ignored_; }
  void set_external_data_ignored(bool ignored) { external_data_ignored_ = ignored; }  ///< Marks the model as loaded without its external data.

 private:
  std::unique_ptr<onnx::ModelProto> proto_;
  std::filesystem::path base_dir_;
  std::filesystem::path path_;
  bool external_data_ignored_ = false;
};

/// Loads a model file. External-data references are checked (location inside the model's folder,
/// file present and long enough) but no weight bytes are read. Bad files give kInvalidModel /
/// kNotFound with the path in the message.
Result<Model> load_model(const std::filesystem::path& path);
/// Same, with external data looked up in external_data_dir instead of the model's folder
/// (Polygraphy's --external-data-dir); an empty external_data_dir means the model's folder.
Result<Model> load_model(const std::filesystem::path& path, const std::filesystem::path& external_data_dir);
/// How load_model treats external data.
struct LoadOptions {
  /// Where external data is looked up; empty means the model's folder.
  std::filesystem::path external_data_dir;
  /// Polygraphy's --ignore-external-data: load only the structure. External references are neither
  /// checked nor read; reading such a tensor's values fails, and saving keeps the references.
  bool ignore_external_data = false;
};
/// Same, with both external-data settings in `options`.
Result<Model> load_model(const std::filesystem::path& path, const LoadOptions& options);
/// Parses a serialized model; external data is resolved against base_dir.
Result<Model> load_model_from_bytes(std::string_view bytes, const std::filesystem::path& base_dir = {},
                                    const std::string& source_label = "<bytes>");

/// How save_model writes the model and its external data.
struct SaveOptions {
  /// Store tensors of at least size_threshold bytes in side files instead of inside the .onnx.
  bool external_data = false;
  /// Side-file name (relative to the model's folder) when all tensors go to one file;
  /// default: "<model file name>.data".
  std::string location;
  size_t size_threshold = 1024;  ///< Minimum tensor size in bytes for external storage.
  /// One side file for all tensors; otherwise one file per tensor, named after the tensor.
  bool all_tensors_to_one_file = true;
};

/// Writes the model (and its side files) to path. Tensors the model keeps externally are copied
/// into the new location, or inlined when external_data is off (refused if the result would pass
/// protobuf's 2 GiB limit). Files are written to temporaries and renamed, so a failure overwrites
/// nothing.
Status save_model(const Model& model, const std::filesystem::path& path, const SaveOptions& options = {});

/// Serialized bytes of the model as it is (external tensors stay references). Throws kInvalidModel
/// when the message exceeds protobuf's 2 GiB limit.
std::string serialize_model(const Model& model);

/// Largest opset of a domain this build has schemas for: libonnx 1.17's plus parity's own
/// (model/schemas/newer_onnx.h, ai.onnx up to 28); 0 for unknown domains.
int64_t max_known_opset(const std::string& domain = "");
/// Largest IR version the linked libonnx knows.
int64_t max_known_ir_version();
/// Warnings for a model newer than libonnx (IR version or opsets): parity still loads and inspects
/// such models, but checks and shape inference may be incomplete.
std::vector<std::string> newer_than_library_warnings(const onnx::ModelProto& model);

/// "" for the default ONNX domain, whichever way it is spelled ("" or "ai.onnx").
std::string normalize_domain(const std::string& domain);

}  // namespace parity::model
