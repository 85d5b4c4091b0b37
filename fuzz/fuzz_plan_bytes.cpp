// Plan file bytes as they arrive: the framing (magic, format version, header, section sizes and
// checksums, parity version, machine) and, for the few inputs whose checksums still hold, the
// loader. fuzz_plan_graph reaches past the checksums.
#include <cstdint>
#include <string>

#include "fuzz_common.h"
#include "runtime/plan/plan_file.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  parity::fuzz::limit_allocations();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  parity::fuzz::expect_clean([&] {
    parity::runtime::plan::load_plan_bytes(std::string(reinterpret_cast<const char*>(data), size)).value();
  });
  return 0;
}
