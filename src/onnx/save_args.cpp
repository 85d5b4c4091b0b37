#include "onnx/save_args.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace parity::onnx_io {

void add_model_save_options(cli::ArgParser& parser) {
  parser.group("Model saving");
  parser.add({.flags = {"--external-data", "--save-external-data"},
              .dest = "external_data",
              .help = "Store weights in a side file next to the saved model (needed past protobuf's 2 GiB limit)",
              .arity = cli::Arity::kFlag});
  parser.add({.flags = {"--external-data-location"},
              .help = "Name of the side file, relative to the model's folder (default: <model file>.data)",
              .metavar = "NAME"});
  parser.add({.flags = {"--external-data-size-threshold"},
              .help = "Only tensors of at least this many bytes go to the side file; accepts K, M, G suffixes "
                      "(default: 1024)",
              .metavar = "SIZE"});
  parser.add({.flags = {"--no-save-all-tensors-to-one-file"},
              .help = "Write one side file per tensor instead of one for all",
              .arity = cli::Arity::kFlag});
}

SaveOptions model_save_options(const cli::Args& args) {
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

uint64_t parse_size(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  std::string suffix = end ? std::string(end) : std::string();
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.size() == 2 && suffix[1] == 'B') suffix.pop_back();  // "4KB" like "4K"
  double scale = 1;
  if (suffix == "K") scale = 1024.0;
  else if (suffix == "M") scale = 1024.0 * 1024;
  else if (suffix == "G") scale = 1024.0 * 1024 * 1024;
  else
    PARITY_CHECK(suffix.empty() || suffix == "B", kInvalidArgument, "invalid size '", text, "' for ", what,
                 "; use a byte count with an optional K, M or G suffix");
  PARITY_CHECK(end != text.c_str() && std::isfinite(value) && value >= 0, kInvalidArgument, "invalid size '", text,
               "' for ", what);
  return static_cast<uint64_t>(std::llround(value * scale));
}

}  // namespace parity::onnx_io
