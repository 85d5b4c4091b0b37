#include "tools/surgeon/model_output.h"

#include <onnx/onnx_pb.h>

#include <set>

#include "core/formats/file_io.h"
#include "core/logger.h"
#include "model/external_data.h"
#include "model/transforms/opset.h"
#include "model/transforms/proto_walk.h"
#include "model/transforms/weights.h"

namespace parity::tools {

namespace fs = std::filesystem;

namespace {

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

}  // namespace

void check_not_overwriting_input(const model::Model& input, const fs::path& out, const model::SaveOptions& options) {
  const fs::path in = input.path();
  PARITY_CHECK(in.empty() || !same_file(in, out), kInvalidArgument, "output '", out.string(),
               "' is the input model; choose another path or pass --force to overwrite it");
  if (options.external_data && options.all_tensors_to_one_file) {
    fs::path dir = out.parent_path();
    if (dir.empty()) dir = ".";
    const fs::path side = dir / (options.location.empty() ? out.filename().string() + ".data" : options.location);
    std::set<std::string> locations;
    model::transforms::for_each_dense_tensor(const_cast<onnx::ModelProto&>(input.proto()), [&](onnx::TensorProto& t) {
      if (model::has_external_data(t)) locations.insert(model::parse_external_data(t).location);
    });
    for (const auto& location : locations)
      PARITY_CHECK(!same_file(input.base_dir() / location, side), kInvalidArgument, "output weight file '",
                   side.string(), "' is the input model's weight file; choose another path or pass --force");
  }
}

void save_checked_model(const model::Model& model, const fs::path& path, const model::SaveOptions& options,
                        bool check) {
  model::save_model(model, path, options).throw_if_error();
  // Stripped tensors reference an empty side file (see model::transforms::reference_weightless_file).
  fs::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  for (const auto& location : model::transforms::weightless_locations(model)) {
    const fs::path side = model::resolve_external_location(location, dir, "(weightless tensors)");
    if (!fs::exists(side)) {
      formats::write_binary_file(side.string(), "");
    }
  }
  logger().info("Saved model to ", path.string());
  // Without its weights the checker would only report the missing weight files.
  if (check && !model.external_data_ignored()) model::transforms::check_saved_model(path);
}

}  // namespace parity::tools
