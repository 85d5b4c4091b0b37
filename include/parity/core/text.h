// Text parsing shared by every layer: blanks, lists, "name:value" items, numbers, shapes and byte
// sizes as the command line and option files spell them. One definition each, so every option
// that takes a shape or a list accepts the same spellings and fails with the same messages.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/metadata.h"
#include "core/tensor.h"

namespace parity {

/// `text` without leading and trailing blanks (spaces, tabs, carriage returns).
std::string trim(std::string_view text);

/// Splits a comma-separated list, optionally in brackets: "a,b", "[a,b]" or "(a,b)" -> {"a","b"}.
/// Items are trimmed; empty items between commas are kept (callers decide whether they are
/// errors); a blank list gives no items. Unbalanced brackets throw kInvalidArgument naming `what`.
std::vector<std::string> split_list(std::string_view text, const std::string& what);

/// Splits "name:value" where the name is optional: at the last ':' outside brackets, so names may
/// contain ':' ("a:0") and values may be bracketed lists ("[1,3]"). No ':' gives {"", text}.
std::pair<std::string, std::string> split_name_value(const std::string& text);

/// Parses a whole string as a number; anything else throws kInvalidArgument naming `what`.
double parse_double(const std::string& text, const std::string& what);
/// Parses a whole string as an integer; anything else throws kInvalidArgument naming `what`.
int64_t parse_int(const std::string& text, const std::string& what);

/// Parses a shape that may have dynamic dimensions: "[1,3,224,224]", "(1, 'batch', ?)", "1,3" or
/// "1x3x224x224". "?" and -1 are unnamed dynamic dimensions, other non-numbers name a dynamic
/// dimension ("batch"), quotes around names are dropped, and "[]" is a scalar.
DimShape parse_dim_shape(const std::string& text, const std::string& what);
/// Parses a concrete shape (the same spellings, every dimension a number >= 0).
Shape parse_shape(const std::string& text, const std::string& what);

/// Parses a byte size: "1024", "4K", "1.5M", "2G" (binary multiples; "KB" reads like "K").
uint64_t parse_size(const std::string& text, const std::string& what);

/// A byte count in a binary unit: value * 1024^power bytes.
struct ScaledBytes {
  double value = 0;  ///< Size in `unit`s.
  const char* unit = "bytes";  ///< "bytes", "KiB", "MiB", "GiB" or "TiB"
  int power = 0;               ///< 0 (bytes) to 4 (TiB)
};
/// `bytes` in the largest unit it holds at least one of, between 1024^smallest and 1024^largest
/// (powers 0 to 4): what the size printers format, each with its own precision.
ScaledBytes scale_bytes(double bytes, int smallest = 0, int largest = 4);

}  // namespace parity
