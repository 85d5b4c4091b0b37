// Polygraphy JSON: RunResults and input lists from the same bytes, each re-serialized and parsed
// again when it parsed.
#include <cstdint>
#include <string>

#include "core/formats/polygraphy_json.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  parity::fuzz::limit_allocations();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  parity::fuzz::expect_clean([&] {
    const parity::RunResults results = parity::run_results_from_json(text);
    if (parity::run_results_from_json(parity::run_results_to_json(results)).size() != results.size()) std::abort();
  });
  parity::fuzz::expect_clean([&] {
    const auto inputs = parity::inputs_from_json(text);
    if (parity::inputs_from_json(parity::inputs_to_json(inputs)).size() != inputs.size()) std::abort();
  });
  return 0;
}
