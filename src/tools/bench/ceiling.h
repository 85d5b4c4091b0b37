// The machine's measured compute ceiling for `parity bench`'s GFLOP/s column: the rate parity's
// own runtime reaches on a large square fp32 MatMul (sgemm) at a given thread count, so that a
// model's achieved GFLOP/s reads as a fraction of what this machine can do.
#pragma once

namespace parity::tools::bench {

/// Best GFLOP/s of an N x N x N fp32 MatMul (N = 1024, constant weights) on ref with `threads`
/// threads, over about `seconds` of runs (at least three).
double measure_sgemm_gflops(int threads, double seconds = 0.5);

}  // namespace parity::tools::bench
