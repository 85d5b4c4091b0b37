// The fast elementwise loops compiled for AVX2 (selected at run time by elementwise_fast.cpp when
// the CPU has it). No FMA: contracting a * b + c would change results against the reference.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "runtime/ops/common/elementwise_fast.h"

#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx2")
#define PARITY_EW_NS avx2
#include "runtime/ops/common/elementwise_fast_loops.inc"
#pragma GCC pop_options
#endif
