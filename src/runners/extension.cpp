#include "runners/extension.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "core/logger.h"

namespace parity::runners {

namespace {

namespace fs = std::filesystem;

std::vector<ExtensionRecord>& records() {
  static auto* list = new std::vector<ExtensionRecord>();  // never destroyed: runners refer to it
  return *list;
}

std::recursive_mutex& load_mutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

std::string text_or(const char* text, const std::string& fallback) { return text && *text ? text : fallback; }

// A runner a refused extension declared: listed, never usable; asking for it gives the reason.
RunnerInfo unavailable_runner(const ParityExtensionRunnerDecl& decl, const ExtensionRecord& record) {
  const Status status(Error(ErrorCode::kUnavailable, record.status.message()));
  RunnerInfo info;
  info.name = decl.name;
  info.flag = decl.flag;
  info.description = text_or(decl.description, "runner of extension " + record.name);
  info.availability = [status](const RunnerOptions&) { return status; };
  info.create = [status](const RunnerConfig&) -> std::unique_ptr<Runner> {
    status.throw_if_error();
    return nullptr;
  };
  info.details = [path = record.path](const RunnerOptions&) { return "extension: " + path; };
  return info;
}

// Collects what init registers, and commits it to the registries only when init succeeded.
class PendingHost final : public ExtensionHost {
 public:
  PendingHost(std::string path, const ParityExtensionDescriptor& descriptor)
      : path_(std::move(path)), descriptor_(descriptor) {}

  void add_runner(RunnerInfo info) override {
    const ParityExtensionRunnerDecl* decl = declaration(info.name);
    PARITY_CHECK(decl, kInvalidArgument, "registers runner '", info.name, "', which its descriptor does not declare");
    PARITY_CHECK(info.flag.empty() || info.flag == decl->flag, kInvalidArgument, "runner '", info.name,
                 "' is declared with flag ", decl->flag, " but registered with ", info.flag);
    PARITY_CHECK(static_cast<bool>(info.create), kInvalidArgument, "runner '", info.name, "' has no create function");
    info.flag = decl->flag;
    if (info.description.empty()) info.description = text_or(decl->description, "runner of extension " + path_);
    for (const auto& r : runners_)
      PARITY_CHECK(r.name != info.name, kInvalidArgument, "registers runner '", info.name, "' twice");
    runners_.push_back(std::move(info));
  }

  void add_kernel(const std::string& domain, const std::string& op_type, int since_version,
                  runtime::KernelFactory factory) override {
    PARITY_CHECK(!domain.empty() && domain != "ai.onnx" && domain != "ai.onnx.ml", kInvalidArgument,
                 "kernel ", op_type, ": extensions add kernels for custom domains only, not '",
                 domain.empty() ? "ai.onnx" : domain, "'");
    PARITY_CHECK(since_version >= 1 && factory, kInvalidArgument, "kernel ", domain, "::", op_type,
                 " needs a since_version >= 1 and a factory");
    kernels_.push_back({domain, op_type, since_version, std::move(factory), path_, runtime::KernelTier::kReference});
  }

  const std::string& library_path() const override { return path_; }

  // Everything init must have done, and nothing that clashes with what is registered already.
  void validate() const {
    for (size_t i = 0; i < descriptor_.num_runners; ++i) {
      const char* name = descriptor_.runners[i].name;
      PARITY_CHECK(std::any_of(runners_.begin(), runners_.end(), [&](const RunnerInfo& r) { return r.name == name; }),
                   kInvalidArgument, "declares runner '", name, "' but its init did not register it");
    }
    auto& registry = runtime::KernelRegistry::instance();
    for (const auto& k : kernels_)
      for (int v : registry.versions(k.domain, k.op_type))
        PARITY_CHECK(v != k.since_version, kInvalidArgument, "kernel ", k.domain, "::", k.op_type, " (since ",
                     v, ") is registered already");
    // The runners' option groups must fit beside every registered runner's options.
    options::ArgParser trial("parity", "");
    for (const auto& r : RunnerRegistry::instance().all()) {
      trial.add({.flags = {r.flag}, .dest = "runner:" + r.name, .arity = options::Arity::kCount});
      r.options.add_missing_to(trial);
    }
    for (const auto& r : runners_) {
      const RunnerInfo* existing = RunnerRegistry::instance().find(r.name);
      PARITY_CHECK(!existing, kInvalidArgument, "a runner named '", r.name, "' is registered already",
                   existing && existing->details ? " (" + existing->details({}) + ")" : std::string());
      PARITY_CHECK(!trial.defines(r.flag), kInvalidArgument, "runner flag ", r.flag, " is taken already");
      trial.add({.flags = {r.flag}, .dest = "runner:" + r.name, .arity = options::Arity::kCount});
      r.options.add_to(trial);
    }
  }

  void commit(ExtensionRecord& record) {
    for (auto& k : kernels_) {
      record.kernels.push_back(k.domain + "::" + k.op_type);
      runtime::KernelRegistry::instance().add(std::move(k));
    }
    for (auto& r : runners_) {
      const std::string where = "extension " + record.name + " " + record.version + ": " + path_;
      if (!r.details) {
        r.details = [where](const RunnerOptions&) { return where; };
      } else {
        r.details = [where, inner = r.details](const RunnerOptions& options) {
          const std::string own = inner(options);
          return own.empty() ? where : own + "; " + where;
        };
      }
      RunnerRegistry::instance().add(std::move(r));
    }
  }

 private:
  const ParityExtensionRunnerDecl* declaration(const std::string& name) const {
    for (size_t i = 0; i < descriptor_.num_runners; ++i)
      if (descriptor_.runners[i].name && name == descriptor_.runners[i].name) return &descriptor_.runners[i];
    return nullptr;
  }

  std::string path_;
  const ParityExtensionDescriptor& descriptor_;
  std::vector<RunnerInfo> runners_;
  std::vector<runtime::KernelDef> kernels_;
};

// Runs the extension's init; any failure (nonzero, exception, invalid registration) is the status.
Status run_init(const std::string& path, const ParityExtensionDescriptor& descriptor, ExtensionRecord& record) {
  PendingHost host(path, descriptor);
  try {
    const int rc = descriptor.init(&host);
    if (rc != 0) return Error(ErrorCode::kUnavailable, str_cat("its init failed (returned ", rc, ")"));
  } catch (const std::exception& e) {
    return Error(ErrorCode::kUnavailable, str_cat("its init failed: ", e.what()));
  } catch (...) {
    return Error(ErrorCode::kUnavailable, "its init threw an exception that is not a std::exception");
  }
  try {
    host.validate();
  } catch (const std::exception& e) {
    return Error(ErrorCode::kUnavailable, str_cat("it cannot be registered: ", e.what()));
  }
  host.commit(record);
  return Status::ok();
}

// dlopen, find the entry point, check the ABI, run init. Fills record; returns its status.
Status open_extension(const std::string& path, ExtensionRecord& record, const ParityExtensionDescriptor** out) {
  // RTLD_LOCAL: an extension's own dependencies stay out of the global namespace. Never unloaded:
  // the registries hold functions that live in the library.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    return Error(ErrorCode::kUnavailable, str_cat("cannot load ", path, ": ", err ? err : "dlopen failed"));
  }
  auto entry = reinterpret_cast<ParityExtensionEntry>(dlsym(handle, "parity_extension"));
  if (!entry)
    return Error(ErrorCode::kUnavailable,
                 str_cat(path, " is not a parity extension (it does not export parity_extension())"));
  const ParityExtensionDescriptor* descriptor = entry();
  if (!descriptor) return Error(ErrorCode::kUnavailable, str_cat(path, ": parity_extension() returned null"));
  *out = descriptor;
  record.name = text_or(descriptor->name, record.name);
  record.version = text_or(descriptor->version, "");
  for (size_t i = 0; descriptor->runners && i < descriptor->num_runners; ++i)
    if (descriptor->runners[i].name && descriptor->runners[i].flag) record.runners.push_back(descriptor->runners[i].name);
  if (descriptor->abi_version != PARITY_EXTENSION_ABI_VERSION)
    return Error(ErrorCode::kUnavailable,
                 str_cat("extension ", record.name, " (", path, ") was built for extension ABI ",
                         descriptor->abi_version, "; this parity implements ABI ", PARITY_EXTENSION_ABI_VERSION,
                         " (rebuild it against this parity's headers)"));
  if (!descriptor->init) return Error(ErrorCode::kUnavailable, str_cat("extension ", record.name, " has no init"));
  if (descriptor->cxx_signature != parity_extension_cxx_signature())
    return Error(ErrorCode::kUnavailable,
                 str_cat("extension ", record.name, " (", path, ") was built with another C++ standard library or "
                         "other parity headers (C++ signature ", descriptor->cxx_signature, ", this parity's ",
                         parity_extension_cxx_signature(), "); rebuild it against this parity with the same compiler"));
  Status st = run_init(path, *descriptor, record);
  if (!st.is_ok())
    return Error(ErrorCode::kUnavailable, str_cat("extension ", record.name, " (", path, "): ", st.message()));
  return st;
}

// The runners a refused extension declared become unavailable entries (unless the name is taken).
void register_unavailable(const ParityExtensionDescriptor* descriptor, const ExtensionRecord& record) {
  if (!descriptor || !descriptor->runners) return;
  for (size_t i = 0; i < descriptor->num_runners; ++i) {
    const auto& decl = descriptor->runners[i];
    if (!decl.name || !decl.flag || RunnerRegistry::instance().find(decl.name)) continue;
    bool flag_taken = false;
    for (const auto& r : RunnerRegistry::instance().all()) flag_taken |= r.flag == decl.flag;
    if (!flag_taken) RunnerRegistry::instance().add(unavailable_runner(decl, record));
  }
}

// The record of a file given before, if any.
const ExtensionRecord* find_record(const std::string& key) {
  for (const auto& r : records())
    if (r.path == key) return &r;
  return nullptr;
}

Status load_file(const std::string& path) {
  std::error_code ec;
  const std::string key = fs::weakly_canonical(path, ec).string();
  if (const ExtensionRecord* known = find_record(key)) return known->status;
  ExtensionRecord record;
  record.path = key;
  record.name = fs::path(path).filename().string();
  const ParityExtensionDescriptor* descriptor = nullptr;
  if (!fs::exists(key, ec)) {
    // Recorded like any other refusal, so `parity runners` shows it.
    record.status = Error(ErrorCode::kUnavailable, str_cat("extension file ", path, " does not exist"));
  } else {
    try {
      record.status = open_extension(key, record, &descriptor);
    } catch (const std::exception& e) {  // nothing an extension does may stop parity from starting
      record.status = Error(ErrorCode::kUnavailable, str_cat("extension ", record.name, " (", key, "): ", e.what()));
    }
  }
  if (record.status.is_ok())
    logger().verbose("Loaded extension ", record.name, " ", record.version, " from ", key);
  else
    register_unavailable(descriptor, record);
  records().push_back(record);
  return record.status;
}

std::vector<std::string> split_path_list(const std::string& list) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= list.size()) {
    const size_t colon = list.find(':', pos);
    const std::string item = list.substr(pos, colon == std::string::npos ? std::string::npos : colon - pos);
    if (!item.empty()) out.push_back(item);
    if (colon == std::string::npos) break;
    pos = colon + 1;
  }
  return out;
}

}  // namespace

Status load_extension(const std::string& path) {
  std::lock_guard<std::recursive_mutex> lock(load_mutex());
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return load_file(path);
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(path, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".so") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());  // a stable order whatever the file system returns
  Status first = Status::ok();
  for (const auto& file : files) {
    Status st = load_file(file);
    if (first.is_ok() && !st.is_ok()) first = st;
  }
  return first;
}

std::string installed_extension_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&installed_extension_dir), &info) && info.dli_fname)
    return (fs::path(info.dli_fname).parent_path() / "parity" / "extensions").string();
  return "";
}

void load_default_extensions() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::error_code ec;
    const std::string installed = installed_extension_dir();
    if (!installed.empty() && fs::is_directory(installed, ec)) load_extension(installed);
    if (const char* env = std::getenv("PARITY_EXTENSION_PATH"))
      for (const auto& item : split_path_list(env)) load_extension(item);
  });
}

const std::vector<ExtensionRecord>& loaded_extensions() { return records(); }

}  // namespace parity::runners
