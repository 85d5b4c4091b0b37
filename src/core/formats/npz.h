// numpy .npz archives (np.savez / np.savez_compressed): a zip of one .npy per tensor.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/tensor_map.h"

namespace parity {

/// Reads every member of an .npz archive (stored or deflate-compressed) in archive order.
/// Member 'name.npy' becomes tensor 'name'; other member names are kept whole.
TensorMap read_npz(const std::string& path);

/// Parses an .npz archive held in memory; `what` names it in error messages.
TensorMap npz_from_bytes(const std::string& bytes, const std::string& what = "npz data");

/// Writes tensors as an .npz archive, one 'name.npy' member each, in map order: uncompressed
/// like np.savez, or deflate-compressed like np.savez_compressed. All tensors are serialized
/// before the file is touched, so an unsupported tensor leaves no partial file.
void write_npz(const std::string& path, const TensorMap& tensors, bool compressed = false);

/// Raw (decompressed) members of a zip archive held in memory, in archive order, folders skipped.
std::vector<std::pair<std::string, std::string>> zip_members_from_bytes(const std::string& bytes,
                                                                        const std::string& what);

/// True when the bytes start like a zip archive ("PK\x03\x04" or an empty archive's "PK\x05\x06").
bool looks_like_zip(std::string_view bytes);

}  // namespace parity
