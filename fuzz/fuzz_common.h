// Shared by the libFuzzer targets: parity's own errors (parity::Error) are the expected outcome of
// malformed input; anything else escaping a target is a finding.
#pragma once

#include <cstdlib>
#include <string>

#include "core/status.h"

namespace parity::fuzz {

/// Caps tensor allocations far below libFuzzer's 2 GB malloc limit, so a shape that asks for
/// gigabytes is parity's clean "too large" error rather than a reported out-of-memory.
inline void limit_allocations(size_t bytes = size_t{256} << 20) {
  ::setenv("PARITY_MAX_TENSOR_BYTES", std::to_string(bytes).c_str(), 1);
}

/// Runs fn; parity::Error (a clean one-line rejection) is swallowed, internal errors abort so the
/// fuzzer reports them with the input.
template <typename Fn>
void expect_clean(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    if (e.is_internal()) {
      std::fprintf(stderr, "internal error: %s\n", e.what());
      std::abort();
    }
  }
}

}  // namespace parity::fuzz
