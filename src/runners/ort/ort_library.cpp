#include "runners/ort/ort_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

#include "core/logger.h"

namespace parity::runners::ort {

namespace {

namespace fs = std::filesystem;

constexpr const char* kLibraryFileName = "libonnxruntime.so.1";

std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}

// Loaded libraries by the path they were asked for; never unloaded.
std::map<std::string, std::unique_ptr<OrtLibrary>>& cache() {
  static auto* libraries = new std::map<std::string, std::unique_ptr<OrtLibrary>>();
  return *libraries;
}

// A folder means "the library inside it".
std::string resolve_file(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return (fs::path(path) / kLibraryFileName).string();
  return path;
}

}  // namespace

// An installed parity's own copy of ONNX Runtime (the parity-onnxruntime package): beside the
// libparity this code is running from, in <libdir>/parity/onnxruntime.
static std::string installed_library_candidate() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&installed_library_candidate), &info) || !info.dli_fname) return {};
  std::error_code ec;
  const fs::path libparity = fs::weakly_canonical(info.dli_fname, ec);
  if (ec) return {};
  return (libparity.parent_path() / "parity" / "onnxruntime" / kLibraryFileName).string();
}

std::vector<std::string> default_library_candidates() {
  // An explicit $PARITY_ORT_LIBRARY is the only candidate: falling back would hide a typo.
  if (const char* env = std::getenv("PARITY_ORT_LIBRARY"); env && *env) return {resolve_file(env)};
  std::vector<std::string> out;
  if (std::string installed = installed_library_candidate(); !installed.empty()) out.push_back(std::move(installed));
#ifdef PARITY_ORT_DEFAULT_DIR
  out.push_back((fs::path(PARITY_ORT_DEFAULT_DIR) / kLibraryFileName).string());
#endif
  out.push_back(kLibraryFileName);  // the system loader path (LD_LIBRARY_PATH, ld.so.cache)
  return out;
}

class OrtLibraryLoader {
 public:
  // Loads one file; returns nullptr and sets `why` on failure.
  static std::unique_ptr<OrtLibrary> try_load(const std::string& file, std::string& why);
};

std::unique_ptr<OrtLibrary> OrtLibraryLoader::try_load(const std::string& file, std::string& why) {
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    why = err ? err : "dlopen failed";
    return nullptr;
  }
  auto get_api_base = reinterpret_cast<OrtGetApiBaseFn>(dlsym(handle, "OrtGetApiBase"));
  if (!get_api_base) {
    why = file + " has no OrtGetApiBase symbol (not an ONNX Runtime library)";
    dlclose(handle);
    return nullptr;
  }
  const OrtApiBase* base = get_api_base();
  const char* version = base && base->GetVersionString ? base->GetVersionString() : nullptr;
  const OrtApi* api = base ? base->GetApi(kRequiredApiVersion) : nullptr;
  if (!api) {
    why = str_cat(file, " is ONNX Runtime ", version ? version : "(unknown version)",
                  ", which lacks C API version ", kRequiredApiVersion, " (ONNX Runtime 1.", kRequiredApiVersion,
                  " or newer is needed)");
    dlclose(handle);
    return nullptr;
  }
  std::unique_ptr<OrtLibrary> lib(new OrtLibrary());
  lib->api_ = api;
  lib->version_ = version ? version : "unknown";
  // Report the real file the loader picked (a bare soname resolves through the search path).
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(get_api_base), &info) && info.dli_fname)
    lib->path_ = fs::weakly_canonical(info.dli_fname).string();
  else
    lib->path_ = file;
  return lib;
}

Result<const OrtLibrary*> OrtLibrary::load(const std::string& path) {
  std::lock_guard<std::mutex> lock(cache_mutex());
  auto& libraries = cache();
  if (auto it = libraries.find(path); it != libraries.end()) return static_cast<const OrtLibrary*>(it->second.get());

  std::vector<std::string> candidates;
  if (!path.empty())
    candidates.push_back(resolve_file(path));
  else
    candidates = default_library_candidates();

  std::string reasons;
  for (const auto& file : candidates) {
    std::string why;
    if (auto lib = OrtLibraryLoader::try_load(file, why)) {
      logger().extra_verbose("loaded ONNX Runtime ", lib->version(), " from ", lib->path());
      const OrtLibrary* raw = lib.get();
      libraries.emplace(path, std::move(lib));
      return raw;
    }
    reasons += (reasons.empty() ? "" : "; ") + why;
  }
  if (!path.empty())
    return Error(ErrorCode::kUnavailable, str_cat("cannot load ONNX Runtime from ", path, ": ", reasons));
  if (const char* env = std::getenv("PARITY_ORT_LIBRARY"); env && *env)
    return Error(ErrorCode::kUnavailable, str_cat("cannot load ONNX Runtime from $PARITY_ORT_LIBRARY (", env, "): ", reasons));
  return Error(ErrorCode::kUnavailable,
               str_cat("ONNX Runtime library not found (run scripts/setup.sh, or pass --ort-library PATH or set "
                       "PARITY_ORT_LIBRARY): ",
                       reasons));
}

void OrtLibrary::check(OrtStatus* status, std::string_view what, ErrorCode code) const {
  if (!status) return;
  std::string message = api_->GetErrorMessage(status);
  const int ort_code = api_->GetErrorCode(status);
  api_->ReleaseStatus(status);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  // ORT's own classification is more precise than the caller's guess where it has one.
  switch (ort_code) {
    case kOrtInvalidArgument: code = ErrorCode::kInvalidArgument; break;
    case kOrtNoSuchFile: code = ErrorCode::kNotFound; break;
    case kOrtNoModel:
    case kOrtInvalidProtobuf:
    case kOrtInvalidGraph: code = ErrorCode::kInvalidModel; break;
    case kOrtNotImplemented: code = ErrorCode::kUnsupported; break;
    default: break;
  }
  throw Error(code, str_cat(what, ": ", message));
}

std::vector<std::string> OrtLibrary::available_providers() const {
  char** names = nullptr;
  int count = 0;
  check(api_->GetAvailableProviders(&names, &count), "ONNX Runtime GetAvailableProviders");
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) out.emplace_back(names[i]);
  check(api_->ReleaseAvailableProviders(names, count), "ONNX Runtime ReleaseAvailableProviders");
  return out;
}

OrtEnv* OrtLibrary::env() const {
  std::lock_guard<std::mutex> lock(cache_mutex());
  if (!env_) {
    // ORT's errors reach the user through OrtStatus messages, so its own log stays quiet unless
    // parity is verbose (its warnings about unused initializers and the like would drown the output).
    const OrtLoggingLevel level = logger().enabled(Severity::kVerbose) ? kOrtLogWarning : kOrtLogFatal;
    check(api_->CreateEnv(level, "parity", &env_), "ONNX Runtime CreateEnv");
  }
  return env_;
}

}  // namespace parity::runners::ort
