// The extension's entry point: declares the runner (so parity can list it even if it refuses this
// library) and registers it, with its option groups, when parity calls init.
#include <parity/extension.h>

#include "args/runner.h"

namespace {

const ParityExtensionRunnerDecl kRunners[] = {
    {"res-des", "--res-des", "Identity-only runner of the reshape_destroyer extension (no-op Reshapes become Identity)"},
};

int init(parity::runners::ExtensionHost* host) {
  using reshape_destroyer::IdentityOnlyRunnerArgs;
  host->add_runner({
      .name = "res-des",
      .flag = "--res-des",
      .description = "",  // the declared one
      .options = IdentityOnlyRunnerArgs::group(),
      .availability = [](const parity::runners::RunnerOptions&) { return parity::Status::ok(); },
      .version = [](const parity::runners::RunnerOptions&) { return std::string(RESHAPE_DESTROYER_VERSION); },
      .create =
          [](const parity::runners::RunnerConfig& config) {
            return config.options.get_or(IdentityOnlyRunnerArgs{}).create(config.model_path);
          },
  });
  return 0;
}

}  // namespace

#ifndef RESHAPE_DESTROYER_WRONG_ABI
PARITY_EXTENSION("reshape_destroyer", RESHAPE_DESTROYER_VERSION, kRunners, init)
#else
// A deliberately broken build (the tests use it): the descriptor of an extension built against a
// parity with another extension ABI. parity must list its runner as unavailable and never call init.
extern "C" __attribute__((visibility("default"))) const ParityExtensionDescriptor* parity_extension() {
  static const ParityExtensionDescriptor descriptor{PARITY_EXTENSION_ABI_VERSION + 1, "reshape_destroyer",
                                                    RESHAPE_DESTROYER_VERSION, kRunners, 1, init,
                                                    parity_extension_cxx_signature()};
  return &descriptor;
}
#endif
