#include "model/save_args.h"

#include "core/metadata.h"
#include "core/status.h"
#include "core/text.h"

namespace parity::model {

ModelSaveArgs::ModelSaveArgs() {
  using options::Given;
  section("Model saving");
  add({.flags = {"--external-data"},
       .dest = "external_data",
       .help = "Store weights in a side file next to the saved model (needed past protobuf's 2 GiB limit)",
       .arity = options::Arity::kFlag},
      options::field(&SaveOptions::external_data));
  add({.flags = {"--save-external-data"},
       .dest = "save_external_data",
       .help = "Polygraphy's spelling of --external-data; an optional NAME is the side file's name, relative to "
               "the model's folder (as --external-data-location)",
       .metavar = "NAME",
       .arity = options::Arity::kAny},
      [](SaveOptions& options, const Given& given) {
        if (!given.given()) return;
        PARITY_CHECK(given.values.size() <= 1, kInvalidArgument,
                     "--save-external-data takes at most one file name, got ", given.values.size(), ": ",
                     join_names(given.values));
        if (!given.values.empty()) options.location = given.values.front();
        options.external_data = true;
      });
  add({.flags = {"--external-data-location"},
       .help = "Name of the side file, relative to the model's folder (default: <model file>.data)",
       .metavar = "NAME"},
      [](SaveOptions& options, const Given& given) {
        if (auto location = given.value()) {
          options.location = *location;
          options.external_data = true;
        }
      });
  add({.flags = {"--external-data-size-threshold"},
       .help = "Only tensors of at least this many bytes go to the side file; accepts K, M, G suffixes "
               "(default: 1024)",
       .metavar = "SIZE"},
      [](SaveOptions& options, const Given& given) {
        if (auto threshold = given.value()) {
          options.size_threshold = parse_size(*threshold, given.flag);
          options.external_data = true;
        }
      });
  add({.flags = {"--no-save-all-tensors-to-one-file"},
       .help = "Write one side file per tensor instead of one for all",
       .arity = options::Arity::kFlag},
      [](SaveOptions& options, const Given& given) {
        options.all_tensors_to_one_file = !given.given();
        if (!options.all_tensors_to_one_file) options.external_data = true;
      });
}

}  // namespace parity::model
