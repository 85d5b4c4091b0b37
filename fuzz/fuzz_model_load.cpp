// ONNX model bytes: load (with external-data checks against an empty folder), the IR graph, ONNX
// shape inference and parity's lint.
#include <cstdint>
#include <filesystem>
#include <string>

#include <onnx/onnx_pb.h>

#include "fuzz_common.h"
#include "model/graph.h"
#include "model/model.h"
#include "model/shape_inference.h"
#include "tools/model_lint.h"

namespace {
std::filesystem::path empty_folder;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  parity::fuzz::limit_allocations();
  // External data references resolve inside this folder, which holds nothing.
  empty_folder = std::filesystem::temp_directory_path() / ("parity-fuzz-empty-" + std::to_string(::getpid()));
  std::filesystem::create_directories(empty_folder);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  parity::fuzz::expect_clean([&] {
    auto loaded = parity::model::load_model_from_bytes(
        std::string_view(reinterpret_cast<const char*>(data), size), empty_folder);
    if (!loaded.is_ok()) return;
    parity::model::Model& model = loaded.value();
    parity::fuzz::expect_clean([&] { parity::model::Graph::from_model(model); });
    parity::fuzz::expect_clean([&] {
      onnx::ModelProto copy(model.proto());
      parity::model::infer_shapes(copy);
    });
    parity::fuzz::expect_clean([&] { parity::tools::lint_model(model); });
  });
  return 0;
}
