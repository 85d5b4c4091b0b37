#include "runners/peer_module.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include "core/logger.h"

namespace parity::runners {

namespace {

std::string library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&load_peer_module), &info) && info.dli_fname)
    return std::filesystem::path(info.dli_fname).parent_path().string();
  return ".";
}

}  // namespace

std::string peer_module_path(const std::string& name) {
  const char* dir = std::getenv("PARITY_RUNNER_MODULE_DIR");
  const std::string folder = dir && *dir ? std::string(dir) : library_dir();
  return (std::filesystem::path(folder) / ("libparity_runner_" + name + ".so")).string();
}

Result<const PeerModuleApi*> load_peer_module(const std::string& name) {
  static std::mutex mutex;
  // Results by module path, failures included (dlopen is not retried within one process).
  static auto* loaded = new std::map<std::string, Result<const PeerModuleApi*>>();
  std::lock_guard<std::mutex> lock(mutex);
  const std::string path = peer_module_path(name);
  if (auto it = loaded->find(path); it != loaded->end()) return it->second;

  auto remember = [&](Result<const PeerModuleApi*> r) {
    loaded->emplace(path, r);
    return r;
  };
  // RTLD_LOCAL keeps the runtime's symbols out of the global namespace; modules are never unloaded.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    return remember(Error(ErrorCode::kUnavailable, err ? err : "cannot load " + path));
  }
  using EntryFn = const PeerModuleApi* (*)();
  auto entry = reinterpret_cast<EntryFn>(dlsym(handle, "parity_peer_module"));
  if (!entry) return remember(Error(ErrorCode::kUnavailable, path + " is not a parity runner module"));
  const PeerModuleApi* api = entry();
  if (!api || api->abi_version != kPeerModuleAbiVersion || !api->create)
    return remember(Error(ErrorCode::kUnavailable,
                          str_cat(path, " was built for another parity (module ABI ", api ? api->abi_version : -1,
                                  ", this parity needs ", kPeerModuleAbiVersion, ")")));
  logger().extra_verbose("loaded runner module ", path);
  return remember(api);
}

}  // namespace parity::runners
