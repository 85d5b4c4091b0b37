// What the optimized pooling kernels (pool_dnnl.cpp) expose to tests.
#pragma once

#include <cstdint>

#include "runtime/cpu_isa.h"

namespace parity::runtime::nn {

/// How many MaxPool runs took the direct channels-last loop rather than oneDNN, process-wide.
uint64_t direct_max_pool_runs();

/// Whether channels-last MaxPool takes the direct loop at one thread too (its AVX-512 or AVX2 form
/// runs at `isa`); without it the loop runs only where a pool splits between threads.
bool direct_max_pool_on_one_thread(KernelIsa isa);

}  // namespace parity::runtime::nn
