// Session-wide choices that optimized kernels read at plan time (SessionOptions), offered by the
// planner's KernelInit beside the node itself. A KernelInit without them (tests, tactic timing)
// means the defaults.
#pragma once

#include "runtime/kernel.h"

namespace parity::runtime {

class KernelPreferences {
 public:
  virtual ~KernelPreferences() = default;
  /// Whether 3x3 convolutions may use Winograd's algorithm (SessionOptions::winograd).
  virtual bool winograd_allowed() const = 0;
};

/// KernelPreferences::winograd_allowed of `init`, true when it offers no preferences.
inline bool winograd_allowed(const KernelInit& init) {
  const auto* preferences = dynamic_cast<const KernelPreferences*>(&init);
  return !preferences || preferences->winograd_allowed();
}

}  // namespace parity::runtime
