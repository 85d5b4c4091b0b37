#include "runners/kernel_environment.h"

#include <cctype>
#include <cstdlib>

#include "core/status.h"

namespace parity::runners {

runtime::KernelOptions kernel_options_from_environment() {
  runtime::KernelOptions options;
  for (const std::string& name : runtime::kernel_switch_names()) {
    std::string variable = "PARITY_" + name;
    for (char& c : variable) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const char* value = std::getenv(variable.c_str());
    if (!value || !*value) continue;
    const Status set = runtime::set_kernel_switch(options, name, value);
    PARITY_CHECK(set.is_ok(), kInvalidArgument, "$", variable, ": ", set.message());
  }
  return options;
}

runtime::KernelOptions with_isa_cap(runtime::KernelOptions options, const std::string& isa) {
  const std::optional<runtime::KernelIsa> cap = runtime::parse_kernel_isa(isa);
  PARITY_CHECK(cap.has_value(), kInvalidArgument, "--isa must be native, avx512, avx2 or baseline, got '", isa, "'");
  options.isa_cap = *cap;
  return options;
}

}  // namespace parity::runners
