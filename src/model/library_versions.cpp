#include "model/library_versions.h"

#include <dlfcn.h>
#include <google/protobuf/stubs/common.h>
#include <onnx/common/version.h>

namespace parity::model {

std::string onnx_library_version() { return onnx::LAST_RELEASE_VERSION; }

std::string protobuf_library_version() { return google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION); }

std::string protobuf_library_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&google::protobuf::ShutdownProtobufLibrary), &info) && info.dli_fname)
    return info.dli_fname;
  return "";
}

}  // namespace parity::model
