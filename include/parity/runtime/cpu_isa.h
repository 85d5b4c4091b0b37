// What this CPU offers the kernels and what they dispatch to: the facts a performance or
// wrong-result report needs, since parity's vector loops and oneDNN's JIT choose code at run time.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace parity::runtime {

/// The vector tiers parity's own kernels are written for, lowest first: kAvx2 needs AVX2 and FMA,
/// kAvx512 AVX-512 F, BW and VL (every AVX-512 CPU since Skylake-SP). Every kernel family picks its variant from one of these, so capping the tier
/// (KernelOptions::isa_cap) runs the lower variants on a machine that has the higher ones.
enum class KernelIsa { kBaseline, kAvx2, kAvx512 };
/** \var KernelIsa::kBaseline
    The build's baseline instruction set, without the AVX2 or AVX-512 kernels. */
/** \var KernelIsa::kAvx2
    AVX2 and FMA. */
/** \var KernelIsa::kAvx512
    AVX-512 F, BW and VL. */

/// The highest tier this CPU (and operating system) supports.
KernelIsa cpu_kernel_isa();
/// The lower of two tiers.
inline KernelIsa min_isa(KernelIsa a, KernelIsa b) { return a < b ? a : b; }
/// "baseline", "avx2", "avx512".
std::string kernel_isa_name(KernelIsa isa);
/// The tier named by kernel_isa_name's text; "native" is the highest tier (caps nothing).
std::optional<KernelIsa> parse_kernel_isa(const std::string& name);

/// Caps oneDNN's JIT at the ISA matching `cap` (avx2 -> AVX2, baseline -> SSE4.1, avx512 -> no
/// cap). oneDNN's cap is process-wide and takes effect only before its first primitive is
/// created: false when it is too late (or the build has no oneDNN and the cap is not kAvx512).
bool cap_dnnl_isa(KernelIsa cap);

/// The CPU's model name as /proc/cpuinfo reports it ("" when unknown).
std::string cpu_model_name();

/// The instruction-set extensions this CPU (and operating system) supports, out of those that
/// parity's kernels or oneDNN dispatch on, in order of introduction: "sse4.2", "avx", "avx2",
/// "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512vnni", "avx512bf16", "avx512fp16",
/// "amx-tile", "amx-int8", "amx-bf16".
std::vector<std::string> cpu_isa_extensions();

/// The variant parity's own vector kernels (matmul, elementwise, pooling, convolution stems) pick
/// here without a cap: "avx512" (AVX-512F), "avx2" (AVX2 and FMA) or "baseline".
std::string vector_kernel_tier();

/// oneDNN's effective ISA, the CPU's capped by $ONEDNN_MAX_CPU_ISA ("avx512_core_amx"); "" in a
/// build without oneDNN.
std::string dnnl_isa_name();

/// The version of the oneDNN library loaded ("2.6.3"), "" in a build without oneDNN.
std::string dnnl_library_version();

}  // namespace parity::runtime
