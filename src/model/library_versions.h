// Versions of the model layer's libraries as this build links them: libonnx (built into libparity)
// and protobuf (loaded from the system), for `parity --version` and bug reports.
#pragma once

#include <string>

namespace parity::model {

/// libonnx's release ("1.17.0").
std::string onnx_library_version();

/// The protobuf version parity was compiled against ("3.21.12").
std::string protobuf_library_version();

/// The protobuf library file this process loaded ("" when the loader does not say).
std::string protobuf_library_path();

}  // namespace parity::model
