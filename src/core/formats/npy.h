// numpy .npy files: read versions 1.0/2.0/3.0, write 1.0 (2.0 for huge headers) byte-for-byte as
// numpy.save does, for every dtype numpy can express. Little-endian data only.
#pragma once

#include <string>
#include <string_view>

#include "core/tensor.h"

namespace parity {

/// Parses a complete .npy file held in memory. `what` names the source in error messages
/// (a path, "member 'x.npy' of a.npz", ...). Fortran-ordered arrays are transposed to C order.
/// Throws kInvalidModel for malformed data, kUnsupported for dtypes parity cannot hold
/// (big-endian, structured, strings/objects).
Tensor npy_from_bytes(std::string_view bytes, std::string_view what = "npy data");

/// Like npy_from_bytes, but takes ownership of the bytes and, when the data is suitably aligned,
/// uses them as the tensor's memory instead of copying (for large files and members).
Tensor npy_from_string(std::string&& bytes, std::string_view what = "npy data");

/// Serializes a tensor exactly as numpy.save writes it (format 1.0, header padded to a multiple
/// of 64 bytes). bfloat16 and the low-precision types are written as numpy with ml_dtypes writes
/// them ('<V2', '<f1' for float8e5m2, '<V1' for the other 1-byte types; int4/int2 in the low bits);
/// reading '<V1' gives a kNumpyVoid1 tensor (see core/low_precision.h). Throws kUnsupported for
/// string tensors.
std::string npy_to_bytes(const Tensor& tensor);

/// Reads a .npy file.
Tensor read_npy(const std::string& path);
/// Writes a .npy file (atomically: a failure leaves no partial file).
void write_npy(const std::string& path, const Tensor& tensor);

/// True when the bytes start with the .npy magic string.
bool looks_like_npy(std::string_view bytes);

}  // namespace parity
