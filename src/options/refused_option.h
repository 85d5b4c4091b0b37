// Options a parser recognizes but refuses: Polygraphy's TensorRT and TensorFlow options, which
// parity cannot honour. Giving one fails with its one-line message (what it needs, and parity's
// closest option) instead of "unrecognized option"; --help and "did you mean" lists leave them out.
#pragma once

#include <string>
#include <string_view>

#include "options/args.h"

namespace parity::options {

/// An option that fails with `message` when given (its value, if any, is never read).
OptionSpec refused_option(const std::string& flag, std::string message);
/// Whether `spec` was made by refused_option(); its message is then `spec.help`.
bool is_refused(const OptionSpec& spec);

}  // namespace parity::options
