// Session-wide choices that optimized kernels read at plan time (SessionOptions), offered by the
// planner's KernelInit beside the node itself. A KernelInit without them (tests, tactic timing)
// means the defaults.
#pragma once

#include "runtime/kernel.h"
#include "runtime/kernel_options.h"

namespace parity::runtime {

class KernelPreferences {
 public:
  virtual ~KernelPreferences() = default;
  /// Whether 3x3 convolutions may use Winograd's algorithm (SessionOptions::winograd).
  virtual bool winograd_allowed() const = 0;
  /// The session's kernel switches and ISA cap (SessionOptions::kernel_options).
  virtual const KernelOptions& kernel_options() const = 0;
};

/// KernelPreferences::winograd_allowed of `init`, true when it offers no preferences.
inline bool winograd_allowed(const KernelInit& init) {
  const auto* preferences = dynamic_cast<const KernelPreferences*>(&init);
  return !preferences || preferences->winograd_allowed();
}

/// KernelPreferences::kernel_options of `init`, the defaults when it offers no preferences.
inline const KernelOptions& kernel_options(const KernelInit& init) {
  static const KernelOptions defaults;
  const auto* preferences = dynamic_cast<const KernelPreferences*>(&init);
  return preferences ? preferences->kernel_options() : defaults;
}

/// The vector tier `init`'s kernel may dispatch to: the CPU's, lowered to the session's cap.
inline KernelIsa kernel_isa(const KernelInit& init) { return effective_kernel_isa(kernel_options(init)); }

}  // namespace parity::runtime
