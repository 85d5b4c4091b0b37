#include "cli/commands/model_edit_common.h"

#include <onnx/onnx_pb.h>

#include <fstream>
#include <set>

#include "core/logger.h"
#include "onnx/external_data.h"
#include "onnx/save_args.h"
#include "onnx/transforms/opset.h"
#include "onnx/transforms/proto_walk.h"
#include "onnx/transforms/weights.h"

namespace parity::cli::model_edit {

namespace fs = std::filesystem;

namespace {

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
  onnx_io::add_model_save_options(parser);
}

onnx_io::Model load_input(const Args& args) {
  const std::string path = args.get_or("model", "");
  logger().info("Loading model: ", path);
  return onnx_io::load_model(path).value();
}

onnx_io::SaveOptions save_options(const Args& args) { return onnx_io::model_save_options(args); }

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
  // Stripped tensors reference an empty side file (see transforms::reference_weightless_file).
  fs::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  for (const auto& location : transforms::weightless_locations(model)) {
    const fs::path side = onnx_io::resolve_external_location(location, dir, "(weightless tensors)");
    if (!fs::exists(side)) {
      std::ofstream created(side, std::ios::binary);
      PARITY_CHECK(created.good(), kIo, "cannot create '", side.string(), "'");
    }
  }
  logger().info("Saved model to ", path.string());
  if (check) transforms::check_saved_model(path);
}

}  // namespace parity::cli::model_edit
