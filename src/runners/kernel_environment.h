// The ref runtime's measuring switches as environment variables ($PARITY_CONV_STEM_DIRECT=off,
// docs/cli.md): read here, where commands build their SessionOptions, never inside the runtime.
#pragma once

#include <string>

#include "runtime/kernel_options.h"

namespace parity::runners {

/// The default KernelOptions with every $PARITY_<SWITCH> that is set applied (switch names of
/// runtime::kernel_switch_names(), upper-cased). A value the switch does not take is
/// kInvalidArgument naming the variable and the values it takes.
runtime::KernelOptions kernel_options_from_environment();

/// `options` with its ISA cap set from a --isa value ("native", "avx512", "avx2", "baseline");
/// another value is kInvalidArgument.
runtime::KernelOptions with_isa_cap(runtime::KernelOptions options, const std::string& isa);

}  // namespace parity::runners
