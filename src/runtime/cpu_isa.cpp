#include "runtime/cpu_isa.h"

#include <fstream>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#if PARITY_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

#include "core/text.h"

namespace parity::runtime {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos) return trim(line.substr(colon + 1));
  }
  return "";
}

std::vector<std::string> cpu_isa_extensions() {
  std::vector<std::string> found;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  // __builtin_cpu_supports also checks that the OS saves the AVX and AVX-512 registers; clang 14
  // does not know f16c, avx512fp16 or AMX, which come from CPUID directly.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
  unsigned leaf7_edx = 0, leaf7_1_eax = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) leaf7_edx = edx;
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) leaf7_1_eax = eax;
  const bool avx512 = __builtin_cpu_supports("avx512f");
  auto add = [&](bool has, const char* name) {
    if (has) found.push_back(name);
  };
  add(__builtin_cpu_supports("sse4.2"), "sse4.2");
  add(__builtin_cpu_supports("avx"), "avx");
  add(__builtin_cpu_supports("avx2"), "avx2");
  add(__builtin_cpu_supports("fma"), "fma");
  add(f16c && __builtin_cpu_supports("avx"), "f16c");
  add(avx512, "avx512f");
  add(__builtin_cpu_supports("avx512bw"), "avx512bw");
  add(__builtin_cpu_supports("avx512vl"), "avx512vl");
  add(__builtin_cpu_supports("avx512vnni"), "avx512vnni");
  add(avx512 && (leaf7_1_eax & (1u << 5)) != 0, "avx512bf16");
  add(avx512 && (leaf7_edx & (1u << 23)) != 0, "avx512fp16");
  add((leaf7_edx & (1u << 24)) != 0, "amx-tile");
  add((leaf7_edx & (1u << 25)) != 0, "amx-int8");
  add((leaf7_edx & (1u << 22)) != 0, "amx-bf16");
#endif
  return found;
}

KernelIsa cpu_kernel_isa() {
  static const KernelIsa isa = [] {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
      return KernelIsa::kAvx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return KernelIsa::kAvx2;
#endif
    return KernelIsa::kBaseline;
  }();
  return isa;
}

std::string kernel_isa_name(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::kAvx512: return "avx512";
    case KernelIsa::kAvx2: return "avx2";
    case KernelIsa::kBaseline: break;
  }
  return "baseline";
}

std::optional<KernelIsa> parse_kernel_isa(const std::string& name) {
  if (name == "native" || name == "avx512") return KernelIsa::kAvx512;
  if (name == "avx2") return KernelIsa::kAvx2;
  if (name == "baseline") return KernelIsa::kBaseline;
  return std::nullopt;
}

bool cap_dnnl_isa(KernelIsa cap) {
#if PARITY_HAVE_DNNL
  switch (cap) {
    case KernelIsa::kAvx512: return true;
    case KernelIsa::kAvx2: return dnnl::set_max_cpu_isa(dnnl::cpu_isa::avx2) == dnnl::status::success;
    case KernelIsa::kBaseline: return dnnl::set_max_cpu_isa(dnnl::cpu_isa::sse41) == dnnl::status::success;
  }
  return false;
#else
  return cap == KernelIsa::kAvx512;
#endif
}

std::string vector_kernel_tier() { return kernel_isa_name(cpu_kernel_isa()); }

std::string dnnl_isa_name() {
#if PARITY_HAVE_DNNL
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  switch (isa) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    default: return "isa-" + std::to_string(static_cast<int>(isa));
  }
#else
  return "";
#endif
}

std::string dnnl_library_version() {
#if PARITY_HAVE_DNNL
  const dnnl_version_t* v = dnnl_version();
  return str_cat(v->major, ".", v->minor, ".", v->patch);
#else
  return "";
#endif
}

}  // namespace parity::runtime
