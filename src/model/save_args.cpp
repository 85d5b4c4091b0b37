#include "model/save_args.h"

#include "core/text.h"

namespace parity::model {

void ModelSaveArgs::add_to(options::ArgParser& parser) const {
  parser.group("Model saving");
  parser.add({.flags = {"--external-data", "--save-external-data"},
              .dest = "external_data",
              .help = "Store weights in a side file next to the saved model (needed past protobuf's 2 GiB limit)",
              .arity = options::Arity::kFlag});
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
