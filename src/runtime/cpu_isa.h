// What this CPU offers the kernels and what they dispatch to: the facts a performance or
// wrong-result report needs, since parity's vector loops and oneDNN's JIT choose code at run time.
#pragma once

#include <string>
#include <vector>

namespace parity::runtime {

/// The CPU's model name as /proc/cpuinfo reports it ("" when unknown).
std::string cpu_model_name();

/// The instruction-set extensions this CPU (and operating system) supports, out of those that
/// parity's kernels or oneDNN dispatch on, in order of introduction: "sse4.2", "avx", "avx2",
/// "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512vnni", "avx512bf16", "avx512fp16",
/// "amx-tile", "amx-int8", "amx-bf16".
std::vector<std::string> cpu_isa_extensions();

/// The variant parity's own vector kernels (matmul, elementwise, pooling, convolution stems) pick
/// here: "avx512" (AVX-512F), "avx2" (AVX2 and FMA) or "baseline".
std::string vector_kernel_tier();

/// oneDNN's effective ISA, the CPU's capped by $ONEDNN_MAX_CPU_ISA ("avx512_core_amx"); "" in a
/// build without oneDNN.
std::string dnnl_isa_name();

/// The version of the oneDNN library loaded ("2.6.3"), "" in a build without oneDNN.
std::string dnnl_library_version();

}  // namespace parity::runtime
