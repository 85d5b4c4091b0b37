// .npz (zip of .npy members) parsing.
#include <cstdint>
#include <string>

#include "core/formats/npz.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  parity::fuzz::limit_allocations();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  parity::fuzz::expect_clean(
      [&] { parity::npz_from_bytes(std::string(reinterpret_cast<const char*>(data), size)); });
  return 0;
}
