// Picks the fast elementwise loop set for a kernel's vector tier.
#include "runtime/ops/common/elementwise_fast.h"

namespace parity::runtime::ops::fast {

namespace baseline {
extern const EwLoops kLoops;
}
#if defined(__x86_64__) && defined(__GNUC__)
namespace avx2 {
extern const EwLoops kLoops;
}
#endif

const EwLoops& baseline_loops() { return baseline::kLoops; }

const EwLoops* avx2_loops() {
#if defined(__x86_64__) && defined(__GNUC__)
  return cpu_kernel_isa() >= KernelIsa::kAvx2 ? &avx2::kLoops : nullptr;
#else
  return nullptr;
#endif
}

const EwLoops& loops(KernelIsa isa) {
  const EwLoops* avx2 = isa >= KernelIsa::kAvx2 ? avx2_loops() : nullptr;
  return avx2 ? *avx2 : baseline_loops();
}

}  // namespace parity::runtime::ops::fast
