// .npy parsing, then a write/read round trip of whatever parsed.
#include <cstdint>
#include <string>

#include "core/formats/npy.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  parity::fuzz::limit_allocations();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  parity::fuzz::expect_clean([&] {
    const parity::Tensor t = parity::npy_from_bytes(std::string_view(reinterpret_cast<const char*>(data), size));
    const std::string again = parity::npy_to_bytes(t);
    const parity::Tensor back = parity::npy_from_bytes(again);
    if (back.shape() != t.shape() || back.dtype() != t.dtype() || back.size_bytes() != t.size_bytes()) std::abort();
  });
  return 0;
}
