// External data: tensors whose bytes live in side files next to the model (ONNX's
// `data_location: EXTERNAL` with `location`/`offset`/`length` keys). parity maps those files
// instead of reading them, so a model with many gigabytes of weights loads in milliseconds and
// only the pages a kernel touches become resident.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "core/tensor.h"

#include "model/onnx_fwd.h"

namespace parity::model {

/// The external_data key/value entries of a TensorProto, parsed.
struct ExternalDataRef {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;  // -1 when the key is absent
};

/// True when the tensor stores its bytes in a side file.
bool has_external_data(const onnx::TensorProto& proto);

/// Marker (in a TensorProto's doc_string) of a tensor whose values were stripped: Polygraphy's and
/// TensorRT's weightless models ("TRT_WEIGHTLESS/" or "TRT_WEIGHTLESS/SPARSE_2_4").
inline constexpr const char* kWeightlessMarker = "TRT_WEIGHTLESS";
/// True for a stripped tensor: marked weightless and without inline values (it may reference an
/// empty side file). Loading does not check its external reference and saving writes it as it is.
bool is_weightless(const onnx::TensorProto& proto);
/// Parses location/offset/length; malformed numbers throw kInvalidModel naming the tensor.
ExternalDataRef parse_external_data(const onnx::TensorProto& proto);

/// Resolves an external-data location against the model's folder. Refuses (kInvalidModel) absolute
/// paths, '..' components and locations that leave the folder through a symlink.
std::filesystem::path resolve_external_location(const std::string& location, const std::filesystem::path& base_dir,
                                                const std::string& tensor_label);

/// Checks, without reading any tensor bytes, that the tensor's external file exists inside
/// base_dir and holds the bytes its dtype/shape need. Throws kInvalidModel / kNotFound.
void validate_external_tensor(const onnx::TensorProto& proto, const std::filesystem::path& base_dir);

/// Returns a Tensor over a private, copy-on-write mapping of the external file (writes to it never
/// reach the file). Files are mapped once and shared by every tensor that lives in them.
Tensor map_external_tensor(const onnx::TensorProto& proto, const std::filesystem::path& base_dir);

/// A read-only view of a whole file, mapped copy-on-write; used for external data and model files.
class MappedFile : public Storage {
 public:
  /// Maps (or reuses an existing mapping of) the file. Throws kNotFound / kIo.
  static std::shared_ptr<MappedFile> open(const std::filesystem::path& path);
  ~MappedFile() override;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  std::byte* data() override { return data_; }
  size_t size_bytes() const override { return size_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  MappedFile() = default;
  std::byte* data_ = nullptr;
  size_t size_ = 0;
  std::filesystem::path path_;
};

}  // namespace parity::model
