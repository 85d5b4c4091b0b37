#include "model/save_args.h"

#include "core/metadata.h"
#include "core/status.h"
#include "core/text.h"

namespace parity::model {

void ModelSaveArgs::add_to(options::ArgParser& parser) const {
  parser.group("Model saving");
  parser.add({.flags = {"--external-data"},
              .dest = "external_data",
              .help = "Store weights in a side file next to the saved model (needed past protobuf's 2 GiB limit)",
              .arity = options::Arity::kFlag});
  parser.add({.flags = {"--save-external-data"},
              .dest = "save_external_data",
              .help = "Polygraphy's spelling of --external-data; an optional NAME is the side file's name, relative to "
                      "the model's folder (as --external-data-location)",
              .metavar = "NAME",
              .arity = options::Arity::kAny});
  parser.add({.flags = {"--external-data-location"},
              .help = "Name of the side file, relative to the model's folder (default: <model file>.data)",
              .metavar = "NAME"});
  parser.add({.flags = {"--external-data-size-threshold"},
              .help = "Only tensors of at least this many bytes go to the side file; accepts K, M, G suffixes "
                      "(default: 1024)",
              .metavar = "SIZE"});
  parser.add({.flags = {"--no-save-all-tensors-to-one-file"},
              .help = "Write one side file per tensor instead of one for all",
              .arity = options::Arity::kFlag});
}

SaveOptions ModelSaveArgs::parse(const options::Args& args) const {
  SaveOptions options;
  options.external_data = args.flag("external_data");
  if (args.has("save_external_data")) {
    const auto names = args.list("save_external_data");
    PARITY_CHECK(names.size() <= 1, kInvalidArgument, "--save-external-data takes at most one file name, got ",
                 names.size(), ": ", join_names(names));
    if (!names.empty()) options.location = names.front();
    options.external_data = true;
  }
  if (auto location = args.get("external_data_location")) {
    options.location = *location;
    options.external_data = true;
  }
  if (auto threshold = args.get("external_data_size_threshold")) {
    options.size_threshold = parse_size(*threshold, "--external-data-size-threshold");
    options.external_data = true;
  }
  options.all_tensors_to_one_file = !args.flag("no_save_all_tensors_to_one_file");
  if (!options.all_tensors_to_one_file) options.external_data = true;
  return options;
}

}  // namespace parity::model
