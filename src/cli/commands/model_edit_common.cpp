#include "cli/commands/model_edit_common.h"

#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstdlib>
#include <set>

#include "core/logger.h"
#include "onnx/external_data.h"
#include "onnx/transforms/opset.h"
#include "onnx/transforms/proto_walk.h"

namespace parity::cli::model_edit {

namespace fs = std::filesystem;

namespace {

uint64_t parse_size(const std::string& text, const std::string& what) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  std::string suffix = end ? std::string(end) : std::string();
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.size() == 2 && suffix[1] == 'B') suffix.pop_back();
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

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

}  // namespace

void add_model_argument(ArgParser& parser) {
  parser.add({.flags = {}, .dest = "model", .help = "Path to the ONNX model", .metavar = "MODEL", .required = true});
}

void add_output_options(ArgParser& parser) {
  parser.group("Output");
  parser.add({.flags = {"-o", "--output"}, .help = "Path of the model to write", .metavar = "OUT", .required = true});
  parser.add({.flags = {"--force"}, .help = "Allow the output to overwrite the input model or its weight files",
              .arity = Arity::kFlag});
  parser.group("Model saving");
  parser.add({.flags = {"--external-data", "--save-external-data"},
              .dest = "external_data",
              .help = "Store weights in a side file next to the saved model (needed past protobuf's 2 GiB limit)",
              .arity = Arity::kFlag});
  parser.add({.flags = {"--external-data-location"},
              .help = "Name of the side file, relative to the model's folder (default: <model file>.data)",
              .metavar = "NAME"});
  parser.add({.flags = {"--external-data-size-threshold"},
              .help = "Only tensors of at least this many bytes go to the side file; accepts K, M, G suffixes "
                      "(default: 1024)",
              .metavar = "SIZE"});
  parser.add({.flags = {"--no-save-all-tensors-to-one-file"},
              .help = "Write one side file per tensor instead of one for all", .arity = Arity::kFlag});
}

onnx_io::Model load_input(const Args& args) {
  const std::string path = args.get_or("model", "");
  logger().info("Loading model: ", path);
  return onnx_io::load_model(path).value();
}

onnx_io::SaveOptions save_options(const Args& args) {
  onnx_io::SaveOptions options;
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

fs::path output_path(const Args& args, const onnx_io::Model& input) {
  const fs::path out = args.get_or("output", "");
  PARITY_CHECK(!out.empty(), kInvalidArgument, "no output path given (-o)");
  if (args.flag("force")) return out;
  const fs::path in = input.path();
  PARITY_CHECK(in.empty() || !same_file(in, out), kInvalidArgument, "output '", out.string(),
               "' is the input model; choose another path or pass --force to overwrite it");
  const onnx_io::SaveOptions options = save_options(args);
  if (options.external_data && options.all_tensors_to_one_file) {
    fs::path dir = out.parent_path();
    if (dir.empty()) dir = ".";
    const fs::path side = dir / (options.location.empty() ? out.filename().string() + ".data" : options.location);
    std::set<std::string> locations;
    transforms::for_each_dense_tensor(const_cast<onnx::ModelProto&>(input.proto()), [&](onnx::TensorProto& t) {
      if (onnx_io::has_external_data(t)) locations.insert(onnx_io::parse_external_data(t).location);
    });
    for (const auto& location : locations)
      PARITY_CHECK(!same_file(input.base_dir() / location, side), kInvalidArgument, "output weight file '",
                   side.string(), "' is the input model's weight file; choose another path or pass --force");
  }
  return out;
}

void save_output(const onnx_io::Model& model, const fs::path& path, const Args& args, bool check) {
  onnx_io::save_model(model, path, save_options(args)).throw_if_error();
  logger().info("Saved model to ", path.string());
  if (check) transforms::check_saved_model(path);
}

}  // namespace parity::cli::model_edit
