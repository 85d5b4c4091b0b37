// The fast elementwise loops for the baseline target of the build (SSE2 on x86-64).
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "runtime/ops/common/elementwise_fast.h"

#define PARITY_EW_NS baseline
#include "runtime/ops/common/elementwise_fast_loops.inc"
