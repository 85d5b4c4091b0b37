// Registers the LibTorch runner (`--torch`) from libparity. The runner itself lives in the
// libparity_runner_torch module, loaded on first use, so a missing LibTorch only makes this runner
// unavailable.
#include "core/text.h"
#include "runners/peer_module.h"
#include "runners/torch/torch_options.h"

namespace parity::runners {
namespace {

// NAME:VALUE items ("" names the only input), each value read by `parse`.
template <class V, class Parse>
options::Group<TorchRunnerOptions>::Bind named_values(std::map<std::string, V> TorchRunnerOptions::*member,
                                                       Parse parse) {
  return [member, parse](TorchRunnerOptions& o, const options::Given& given) {
    for (const auto& item : given.values) {
      auto [name, value] = split_name_value(item);
      (o.*member)[name] = parse(value, given.flag + " " + item);
    }
  };
}

options::Group<TorchRunnerOptions> torch_options() {
  options::Group<TorchRunnerOptions> group;
  group.section("LibTorch runner (--torch)")
      .add({.flags = {"--torch-output-names"},
            .help = "Names for the outputs of the TorchScript model's forward(), in order (TorchScript has no "
                    "output names; default: output_0, output_1, ..., or the keys of a returned dict)",
            .metavar = "NAME",
            .arity = options::Arity::kOneOrMore},
           options::field(&TorchRunnerOptions::output_names))
      .add({.flags = {"--torch-threads"}, .help = "Intra-op threads (0: LibTorch's default)", .metavar = "N"},
           options::convert(&TorchRunnerOptions::threads,
                            [](const std::string& text, const std::string& flag) {
                              return parse_thread_count(text, flag, 0);
                            }))
      // TorchScript has no input dtypes; commands whose data loader defines this option share it.
      .add({.flags = {"--input-dtypes"},
            .help = "Input dtypes for models without metadata (TorchScript), name:dtype, e.g. ids:int64 "
                    "(default float32)",
            .metavar = "DTYPE",
            .arity = options::Arity::kOneOrMore},
           named_values(&TorchRunnerOptions::dtypes,
                        [](const std::string& value, const std::string& where) {
                          const auto dtype = dtype_from_name(value);
                          PARITY_CHECK(dtype, kInvalidArgument, where, ": unknown dtype '", value, "'");
                          return *dtype;
                        }))
      .borrow({.flags = {"--input-shapes", "--inputs"}, .dest = "input_shapes"},
              named_values(&TorchRunnerOptions::shapes, [](const std::string& value, const std::string& where) {
                return parse_dim_shape(value, where);
              }));
  return group;
}

const RunnerRegistrar kTorchRunner({
    .name = "torch",
    .flag = "--torch",
    .description = "LibTorch (TorchScript .pt files; input shapes/dtypes from --input-shapes/--input-dtypes)",
    .options = torch_options(),
    .availability = [](const RunnerOptions&) { return load_peer_module("torch").status(); },
    .version =
        [](const RunnerOptions&) {
          auto module = load_peer_module("torch");
          return module ? module.value()->version() : std::string();
        },
    .create =
        [](const RunnerConfig& config) {
          auto module = load_peer_module("torch");
          module.status().throw_if_error();
          return module.value()->create(config);
        },
    .set_threads = set_threads_in(&TorchRunnerOptions::threads),
    .listing_order = 4,
});

}  // namespace
}  // namespace parity::runners
