/// \file
/// Extension modules: PARITY_EXTENSION, the C descriptor it exports and the C++ API its init gets.
// Extension modules: shared libraries that add runners (each with its own loader and option group)
// and reference kernels for custom-domain operators to parity, without changing parity itself
// (Polygraphy's `polygraphy run` extension modules, in C++).
//
// An extension exports one C symbol, `parity_extension`, through PARITY_EXTENSION below. It returns
// a ParityExtensionDescriptor: plain C data whose first fields (the ABI number, the extension's name
// and version, and the runners it declares) keep their layout in every ABI version, so that parity
// can always read them, followed by the init function. parity calls init only when the ABI number
// equals PARITY_EXTENSION_ABI_VERSION and the extension's C++ fingerprint
// (parity_extension_cxx_signature) equals parity's: what init receives (ExtensionHost, RunnerInfo,
// Runner, options::ArgParser, runtime::KernelFactory) are C++ types, so an extension must be built
// against the headers of the parity that loads it, with the same compiler family.
//
// Where parity looks, in this order (each a file, or a folder whose *.so files are all loaded):
//   1. <libdir>/parity/extensions/ of the installation (the folder libparity.so lives in),
//   2. $PARITY_EXTENSION_PATH, a ':'-separated list,
//   3. `--extension PATH` on the command line (before the subcommand, or among its options).
// The C++ API loads nothing by itself: call load_extension() or load_default_extensions().
//
// Threads (docs/concurrency.md): load_extension() and load_default_extensions() may be called from
// several threads at once (they take one process-wide lock, and each file is loaded once), but not
// while other threads plan sessions or look runners up: load extensions first, then start those
// threads. Another process may load an extension folder at any moment, so a library must appear
// in it complete: copy it under a name that does not end in .so, then rename it (`mv` in the same
// folder is atomic).
//
// A library that cannot be loaded, is not a parity extension, was built for another ABI, or fails
// (returns nonzero or throws) in init never stops parity: the runners it declares are registered
// as unavailable with the reason, so `parity runners` lists them (exit 0) and only a command that
// asks for one of them fails (exit 1) with that reason.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "runners/registry.h"
#include "runtime/kernel.h"

/// The extension ABI this parity implements; bumped whenever anything init receives changes.
#define PARITY_EXTENSION_ABI_VERSION 1u

namespace parity::runners {

/// What an extension's init registers things with. Registrations take effect only when init
/// returns 0 without throwing; a failed init leaves no trace but its declared, unavailable runners.
class ExtensionHost {
 public:
  virtual ~ExtensionHost() = default;
  /// Registers a runner. Its name and flag must be those of a runner the descriptor declares
  /// (the description may be left empty to keep the declared one). Its options are the
  /// runner's own typed option group (shown by `run --help`), its create builds the runner, with
  /// the extension's own loaders, from RunnerConfig (model path and the runners' options, its own
  /// read back by type).
  virtual void add_runner(RunnerInfo info) = 0;
  /// Registers a reference kernel for op `op_type` of a custom domain (not the default ONNX ones),
  /// used by the ref runner for models with that op from opset `since_version` of `domain` on.
  virtual void add_kernel(const std::string& domain, const std::string& op_type, int since_version,
                          runtime::KernelFactory factory) = 0;
  /// The extension library's own file (e.g. to find data installed next to it).
  virtual const std::string& library_path() const = 0;
};

/// One loaded (or refused) extension library.
struct ExtensionRecord {
  std::string path;     ///< The file (its canonical path).
  std::string name;     ///< From its descriptor; the file name when it has none.
  std::string version;  ///< From its descriptor; "" when it has none.
  Status status;        ///< OK, or why it is unavailable.
  std::vector<std::string> runners;  ///< Runner names it declared.
  std::vector<std::string> kernels;  ///< "domain::Op" of the kernels it registered.
};

/// Loads an extension library, or every *.so file of a folder, once per file. Never throws for a
/// bad library: the returned status (also recorded in loaded_extensions()) says why it is
/// unavailable, and its declared runners are registered as unavailable.
Status load_extension(const std::string& path);
/// Loads the installation's extension folder and $PARITY_EXTENSION_PATH (once per process).
void load_default_extensions();
/// The installation's extension folder: <folder of libparity.so>/parity/extensions.
std::string installed_extension_dir();
/// Every extension library load_extension() was given so far, in load order.
const std::vector<ExtensionRecord>& loaded_extensions();

}  // namespace parity::runners

extern "C" {

/// A runner an extension declares (plain C, readable whatever the ABI).
struct ParityExtensionRunnerDecl {
  const char* name;         ///< Runner name, e.g. "res-des" (runner instances are "<name>-runner-...").
  const char* flag;         ///< The option that selects it, e.g. "--res-des".
  const char* description;  ///< One line for --help and `parity runners`; may be null.
};

/// What `parity_extension()` returns. Fields up to num_runners keep this layout in every ABI.
struct ParityExtensionDescriptor {
  uint32_t abi_version;  ///< PARITY_EXTENSION_ABI_VERSION of the headers the extension was built with.
  const char* name;  ///< The extension's name; null: its file name.
  const char* version;  ///< The extension's version, for `parity runners` and logs; may be null.
  const ParityExtensionRunnerDecl* runners;  ///< The runners it declares (num_runners of them).
  size_t num_runners;  ///< How many declarations `runners` points to.
  // ---- ABI-specific from here on ----
  /// Registers the extension's runners and kernels. Returns 0 on success; nonzero (or a thrown
  /// exception, whose message is shown) makes the extension unavailable.
  int (*init)(parity::runners::ExtensionHost* host);
  /// parity_extension_cxx_signature() as the extension's compiler saw it; checked before init.
  uint64_t cxx_signature;
};

/// The one symbol an extension exports.
using ParityExtensionEntry = const ParityExtensionDescriptor* (*)();

}  // extern "C"

/// A fingerprint of the C++ types init receives, as the compiler building this code lays them out:
/// the standard library (libstdc++ or libc++, its string ABI) and the sizes of the structs an
/// extension fills. parity refuses an extension whose fingerprint differs from its own, which
/// catches another standard library, or headers changed without a new ABI number, before any
/// C++ object crosses the boundary.
constexpr uint64_t parity_extension_cxx_signature() {
  uint64_t signature = 1469598103934665603ull;  // FNV-1a over the numbers below
  auto mix = [&signature](uint64_t value) { signature = (signature ^ value) * 1099511628211ull; };
#if defined(_LIBCPP_VERSION)
  mix(2);
#elif defined(__GLIBCXX__)
  mix(1);
#endif
#ifdef _GLIBCXX_USE_CXX11_ABI
  mix(_GLIBCXX_USE_CXX11_ABI);
#endif
  mix(sizeof(std::string));
  mix(sizeof(std::vector<std::string>));
  mix(sizeof(std::function<void()>));
  mix(sizeof(parity::Status));
  mix(sizeof(parity::options::OptionSpec));
  mix(sizeof(parity::runners::RunnerConfig));
  mix(sizeof(parity::runners::RunnerInfo));
  mix(sizeof(parity::runtime::KernelDef));
  return signature;
}

/// Defines the entry point: PARITY_EXTENSION("reshape_destroyer", "0.1.0", kRunners, init) where
/// kRunners is a `static const ParityExtensionRunnerDecl[]` and init is
/// `int init(parity::runners::ExtensionHost*)`.
#define PARITY_EXTENSION(name, version, runner_decls, init_fn)                                        \
  extern "C" __attribute__((visibility("default"))) const ParityExtensionDescriptor* parity_extension() { \
    static const ParityExtensionDescriptor descriptor{                                                \
        PARITY_EXTENSION_ABI_VERSION, name, version, runner_decls,                                    \
        sizeof(runner_decls) / sizeof((runner_decls)[0]), init_fn, parity_extension_cxx_signature()}; \
    return &descriptor;                                                                               \
  }
