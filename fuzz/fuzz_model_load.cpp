// ONNX model bytes: load (with external-data checks against an empty folder), the IR graph, ONNX
// shape inference and parity's lint; and the same bytes as a file through load_model_mapped (the
// wire-format scan that leaves large initializers out of the parse), which must agree with it.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <onnx/onnx_pb.h>

#include "fuzz_common.h"
#include "model/graph.h"
#include "model/mapped_load.h"
#include "model/model.h"
#include "model/shape_inference.h"
#include "tools/model_lint.h"

namespace {
std::filesystem::path empty_folder;
std::filesystem::path mapped_model;  // the input as a file, in a folder of its own
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  parity::fuzz::limit_allocations();
  // External data references resolve inside this folder, which holds nothing.
  empty_folder = std::filesystem::temp_directory_path() / ("parity-fuzz-empty-" + std::to_string(::getpid()));
  std::filesystem::create_directories(empty_folder);
  const auto mapped_folder =
      std::filesystem::temp_directory_path() / ("parity-fuzz-mapped-" + std::to_string(::getpid()));
  std::filesystem::create_directories(mapped_folder);
  mapped_model = mapped_folder / "model.onnx";
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
    // Without ONNX Runtime's check: it runs ONNX Runtime's own code in this process, and this target
    // fuzzes parity's loading and checks (ONNX Runtime crashes on some malformed models, as `run --ort` does).
    parity::fuzz::expect_clean([&] { parity::tools::lint_model(model, nullptr, {.onnxruntime = false}); });
  });
  parity::fuzz::expect_clean([&] {
    std::ofstream(mapped_model, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                          static_cast<std::streamsize>(size));
    auto mapped = parity::model::load_model_mapped(mapped_model, 16);
    if (!mapped.is_ok()) return;
    const auto& proto = *mapped.value().proto;
    if (proto.graph().initializer_size() < static_cast<int>(mapped.value().initializers->size()))
      __builtin_trap();  // more values read than initializers parsed
  });
  return 0;
}
