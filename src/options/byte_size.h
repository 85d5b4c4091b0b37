// Byte counts as Polygraphy's options take them (--fold-size-threshold 16M): an integer or
// decimal number with an optional K, M or G suffix (KiB, MiB, GiB).
#pragma once

#include <cstdint>
#include <string>

namespace parity::options {

/// Parses "1024", "16M", "1.5K", "2g". Throws kInvalidArgument naming `option` for anything else
/// (negative or non-numeric values).
int64_t parse_num_bytes(const std::string& text, const std::string& option);

}  // namespace parity::options
