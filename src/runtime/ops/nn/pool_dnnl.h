// What the optimized pooling kernels (pool_dnnl.cpp) expose to tests.
#pragma once

#include <cstdint>

namespace parity::runtime::nn {

/// How many MaxPool runs took the direct channels-last loop rather than oneDNN, process-wide.
uint64_t direct_max_pool_runs();

}  // namespace parity::runtime::nn
