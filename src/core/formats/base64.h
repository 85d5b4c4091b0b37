// Standard base64 (RFC 4648, with '=' padding) as Python's base64.b64encode/b64decode use it.
#pragma once

#include <string>
#include <string_view>

namespace parity {

std::string base64_encode(std::string_view bytes);
/// Strict decode (like b64decode(validate=True)); throws kInvalidModel naming `what` on bad input.
std::string base64_decode(std::string_view text, std::string_view what);

}  // namespace parity
