#include "core/build_info.h"

#include "core/status.h"

namespace parity {

std::string build_compiler() {
#if defined(__clang__)
  return str_cat("Clang ", __clang_major__, ".", __clang_minor__, ".", __clang_patchlevel__, ", C++", (__cplusplus / 100) % 100);
#elif defined(__GNUC__)
  return str_cat("GCC ", __GNUC__, ".", __GNUC_MINOR__, ".", __GNUC_PATCHLEVEL__, ", C++", (__cplusplus / 100) % 100);
#else
  return str_cat("unknown compiler, C++", (__cplusplus / 100) % 100);
#endif
}

std::string build_type() {
  // Set by src/CMakeLists.txt on this file only, so other sources keep their compile commands.
  return PARITY_BUILD_TYPE;
}

}  // namespace parity
