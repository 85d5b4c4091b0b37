// Whole-file reads and writes with one clear error line for every way a path can be unusable.
#pragma once

#include <string>
#include <string_view>

namespace parity::formats {

/// Reads a whole regular file. Missing files, directories, FIFOs/devices and unreadable files
/// each fail with one kNotFound/kIo error naming the path (a FIFO is never opened, so this
/// cannot block).
std::string read_binary_file(const std::string& path);

/// Checks that path names a readable regular file (same errors as read_binary_file).
void check_readable_file(const std::string& path);

/// Checks that a file can be created at path: not a directory, parent folder exists.
void check_writable_location(const std::string& path);

/// Writes contents to path through a temporary file in the same folder and a rename, so a
/// failure never leaves a truncated file behind. Throws kIo naming the path.
void write_binary_file(const std::string& path, std::string_view contents);

}  // namespace parity::formats
