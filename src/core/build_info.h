// Facts about how this libparity was built, for `parity --version` and bug reports.
#pragma once

#include <string>

namespace parity {

/// The git revision the build was made from: 12 hex digits, "-dirty" when tracked files differed
/// from that commit, "unknown" outside a git checkout. Refreshed on every build, not only at
/// configure time.
const char* build_revision();

/// The compiler that built libparity, e.g. "GCC 12.2.0" or "Clang 14.0.6".
std::string build_compiler();

/// The CMake build type and instrumentation, e.g. "Release" or "Release, ASan+UBSan".
std::string build_type();

}  // namespace parity
