// Picks the fast elementwise loop set for this CPU.
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
  static const bool has_avx2 = __builtin_cpu_supports("avx2");
  return has_avx2 ? &avx2::kLoops : nullptr;
#else
  return nullptr;
#endif
}

const EwLoops& loops() {
  static const EwLoops& chosen = avx2_loops() ? *avx2_loops() : baseline_loops();
  return chosen;
}

}  // namespace parity::runtime::ops::fast
