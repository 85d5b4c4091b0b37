// Model save round trip: whatever loads is saved (inline, then with external data) and must load
// again with the same graph.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include <onnx/onnx_pb.h>

#include "fuzz_common.h"
#include "model/model.h"

namespace {
std::filesystem::path work;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  parity::fuzz::limit_allocations();
  work = std::filesystem::temp_directory_path() / ("parity-fuzz-save-" + std::to_string(::getpid()));
  std::filesystem::create_directories(work / "in");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  parity::fuzz::expect_clean([&] {
    auto loaded = parity::model::load_model_from_bytes(std::string_view(reinterpret_cast<const char*>(data), size),
                                                       work / "in");
    if (!loaded.is_ok()) return;
    for (const bool external : {false, true}) {
      parity::model::SaveOptions options;
      options.external_data = external;
      options.size_threshold = 0;
      const std::filesystem::path out = work / (external ? "external.onnx" : "inline.onnx");
      if (!parity::model::save_model(loaded.value(), out, options).is_ok()) continue;
      auto again = parity::model::load_model(out);
      if (!again.is_ok()) {
        std::fprintf(stderr, "saved model does not load: %s\n", again.error().what());
        std::abort();
      }
      if (again.value().proto().graph().node_size() != loaded.value().proto().graph().node_size()) std::abort();
    }
  });
  return 0;
}
