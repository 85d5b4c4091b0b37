#include "options/byte_size.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "core/status.h"

namespace parity::options {

int64_t parse_num_bytes(const std::string& text, const std::string& option) {
  std::string number = text;
  double multiplier = 1.0;
  if (!number.empty()) {
    switch (std::toupper(static_cast<unsigned char>(number.back()))) {
      case 'K': multiplier = 1024.0; break;
      case 'M': multiplier = 1024.0 * 1024.0; break;
      case 'G': multiplier = 1024.0 * 1024.0 * 1024.0; break;
      default: break;
    }
    if (multiplier != 1.0) number.pop_back();
  }
  char* end = nullptr;
  const double value = number.empty() ? -1.0 : std::strtod(number.c_str(), &end);
  PARITY_CHECK(!number.empty() && end && *end == '\0' && std::isfinite(value) && value >= 0, kInvalidArgument, option,
               ": '", text, "' is not a number of bytes (an integer, optionally with a K, M or G suffix, e.g. 16M)");
  // Polygraphy truncates fractional results (int(float(x) * multiplier)).
  return static_cast<int64_t>(value * multiplier);
}

}  // namespace parity::options
