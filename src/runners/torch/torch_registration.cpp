// Registers the LibTorch runner (`--torch`) from libparity. The runner itself lives in the
// libparity_runner_torch module, loaded on first use, so a missing LibTorch only makes this runner
// unavailable.
#include "runners/peer_module.h"

namespace parity::runners {
namespace {

void add_torch_options(options::ArgParser& parser) {
  parser.group("LibTorch runner (--torch)");
  parser.add({.flags = {"--torch-output-names"},
              .help = "Names for the outputs of the TorchScript model's forward(), in order (TorchScript has no "
                      "output names; default: output_0, output_1, ..., or the keys of a returned dict)",
              .metavar = "NAME",
              .arity = options::Arity::kOneOrMore});
  parser.add({.flags = {"--torch-threads"}, .help = "Intra-op threads (0: LibTorch's default)", .metavar = "N"});
  // TorchScript has no input dtypes; commands whose data loader already defines this option share it.
  if (!parser.defines("--input-dtypes"))
    parser.add({.flags = {"--input-dtypes"},
                .help = "Input dtypes for models without metadata (TorchScript), name:dtype, e.g. ids:int64 "
                        "(default float32)",
                .metavar = "DTYPE",
                .arity = options::Arity::kOneOrMore});
}

const RunnerRegistrar kTorchRunner({
    .name = "torch",
    .flag = "--torch",
    .description = "LibTorch (TorchScript .pt files; input shapes/dtypes from --input-shapes/--input-dtypes)",
    .add_options = add_torch_options,
    .availability = [](const options::Args*) { return load_peer_module("torch").status(); },
    .version =
        [](const options::Args*) {
          auto module = load_peer_module("torch");
          return module ? module.value()->version() : std::string();
        },
    .create =
        [](const RunnerConfig& config) {
          auto module = load_peer_module("torch");
          module.status().throw_if_error();
          return module.value()->create(config);
        },
    .listing_order = 4,
});

}  // namespace
}  // namespace parity::runners
