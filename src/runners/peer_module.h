// Peer runners that link a heavy third-party library (OpenCV, LibTorch) live in their own shared
// module (libparity_runner_<name>.so, installed next to libparity) that libparity dlopens the first
// time the runner is needed. A missing or broken library then makes only that runner unavailable,
// with the loader's reason, instead of stopping `parity` from starting.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "runners/registry.h"

namespace parity::runners {

/// Bumped whenever PeerModuleApi changes; a module built for another version is refused.
inline constexpr int kPeerModuleAbiVersion = 1;

/// What a runner module exports, through `extern "C" const PeerModuleApi* parity_peer_module()`.
struct PeerModuleApi {
  int abi_version = kPeerModuleAbiVersion;
  /// Version of the wrapped runtime, e.g. "4.6.0".
  std::string (*version)() = nullptr;
  std::unique_ptr<Runner> (*create)(const RunnerConfig& config) = nullptr;
};

/// Loads (once) the module for runner `name`. Fails with kUnavailable and the loader's message.
/// Searched in $PARITY_RUNNER_MODULE_DIR when set, else in the folder libparity was loaded from.
Result<const PeerModuleApi*> load_peer_module(const std::string& name);

/// The file load_peer_module(name) opens.
std::string peer_module_path(const std::string& name);

}  // namespace parity::runners

/// Defines the entry point of a runner module.
#define PARITY_PEER_MODULE(version_fn, create_fn)                                      \
  extern "C" __attribute__((visibility("default"))) const ::parity::runners::PeerModuleApi*   \
  parity_peer_module() {                                                               \
    static const ::parity::runners::PeerModuleApi api{::parity::runners::kPeerModuleAbiVersion, version_fn, create_fn}; \
    return &api;                                                                       \
  }
