// Finding and loading the ONNX Runtime shared library at run time (dlopen), so that parity starts
// and every other runner works whether or not ORT is installed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "runners/ort/ort_api.h"

namespace parity::runners::ort {

/// A loaded libonnxruntime and its OrtApi table. Loaded libraries stay loaded for the life of the
/// process (ORT keeps global state that does not survive unloading).
class OrtLibrary {
 public:
  /// Loads ORT from `path` (a file, or a folder holding libonnxruntime.so.1); an empty path means the
  /// default search: $PARITY_ORT_LIBRARY, then an installed parity's own copy
  /// (<libdir>/parity/onnxruntime, beside libparity), then parity's set-up folder (.cache/ort/lib),
  /// then the system loader path. Fails with kUnavailable, naming what was tried and why it failed.
  static Result<const OrtLibrary*> load(const std::string& path);

  const OrtApi& api() const { return *api_; }
  /// ORT's own version string, e.g. "1.30.0".
  const std::string& version() const { return version_; }
  /// The file that was loaded.
  const std::string& path() const { return path_; }
  /// Execution providers compiled into this build, e.g. {"CPUExecutionProvider"}.
  std::vector<std::string> available_providers() const;
  /// The process-wide ORT environment (created on first use).
  OrtEnv* env() const;

  /// Throws Error(code, "<what>: <ORT's message>") when status is an error; releases the status.
  void check(OrtStatus* status, std::string_view what, ErrorCode code = ErrorCode::kRuntime) const;

 private:
  friend class OrtLibraryLoader;
  OrtLibrary() = default;
  const OrtApi* api_ = nullptr;
  std::string version_;
  std::string path_;
  mutable OrtEnv* env_ = nullptr;
};

/// The candidate files the default search tries, in order (for messages and tests).
std::vector<std::string> default_library_candidates();

}  // namespace parity::runners::ort
