// The ISA predicates that choose oneDNN kernels (runtime/dnnl/dnnl_support.h): containment tests on
// oneDNN's ISA bit sets, checked on every ISA value oneDNN 2.6 names and on this machine's.
#if PARITY_HAVE_DNNL

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "runtime/dnnl/dnnl_support.h"
#include "runtime/dnnl/int8_inputs.h"

namespace parity {
namespace {

using dnnl::cpu_isa;
using runtime::dnnl_support::isa_includes;

TEST(DnnlIsa, EachIsaIncludesTheIsasItExtendsAndNoOthers) {
  const cpu_isa chain[] = {cpu_isa::sse41, cpu_isa::avx, cpu_isa::avx2, cpu_isa::avx512_core,
                           cpu_isa::avx512_core_vnni, cpu_isa::avx512_core_bf16, cpu_isa::avx512_core_amx};
  for (size_t i = 0; i < std::size(chain); ++i) {
    for (size_t j = 0; j < std::size(chain); ++j) {
      EXPECT_EQ(isa_includes(chain[i], chain[j]), j <= i) << static_cast<unsigned>(chain[i]) << " vs "
                                                           << static_cast<unsigned>(chain[j]);
    }
  }
  EXPECT_TRUE(isa_includes(cpu_isa::avx2_vnni, cpu_isa::avx2));
  EXPECT_FALSE(isa_includes(cpu_isa::avx2_vnni, cpu_isa::avx512_core));
  EXPECT_FALSE(isa_includes(cpu_isa::avx512_core_amx, cpu_isa::avx2_vnni));
  EXPECT_FALSE(isa_includes(cpu_isa::avx512_mic_4ops, cpu_isa::avx512_core));
  EXPECT_FALSE(isa_includes(cpu_isa::avx512_core, cpu_isa::avx512_mic));
  // "all" is no feature set: nothing is required to include it and it includes nothing.
  EXPECT_FALSE(isa_includes(cpu_isa::avx512_core_amx, cpu_isa::all));
  EXPECT_FALSE(isa_includes(cpu_isa::all, cpu_isa::sse41));
}

TEST(DnnlIsa, ExactInt8SumsAndNativeBf16FollowTheIsaNames) {
  using runtime::dnnl_support::isa_has_native_bf16;
  using runtime::dnnl_support::isa_sums_int8_exactly;
  const cpu_isa without_vnni[] = {cpu_isa::sse41, cpu_isa::avx, cpu_isa::avx2, cpu_isa::avx512_mic,
                                  cpu_isa::avx512_mic_4ops, cpu_isa::avx512_core};
  for (cpu_isa isa : without_vnni) {
    EXPECT_FALSE(isa_sums_int8_exactly(isa)) << static_cast<unsigned>(isa);
    EXPECT_FALSE(isa_has_native_bf16(isa)) << static_cast<unsigned>(isa);
  }
  EXPECT_TRUE(isa_sums_int8_exactly(cpu_isa::avx2_vnni));
  EXPECT_TRUE(isa_sums_int8_exactly(cpu_isa::avx512_core_vnni));
  EXPECT_TRUE(isa_sums_int8_exactly(cpu_isa::avx512_core_bf16));
  EXPECT_TRUE(isa_sums_int8_exactly(cpu_isa::avx512_core_amx));
  EXPECT_FALSE(isa_has_native_bf16(cpu_isa::avx2_vnni));
  EXPECT_FALSE(isa_has_native_bf16(cpu_isa::avx512_core_vnni));
  EXPECT_TRUE(isa_has_native_bf16(cpu_isa::avx512_core_bf16));
  EXPECT_TRUE(isa_has_native_bf16(cpu_isa::avx512_core_amx));
}

// Runs again under ONEDNN_MAX_CPU_ISA=AVX2 (tests/CMakeLists.txt), where every predicate is false.
TEST(DnnlIsa, PredicatesFollowOneDnnsEffectiveIsa) {
  namespace ds = runtime::dnnl_support;
  const cpu_isa effective = ds::effective_isa();
  EXPECT_EQ(ds::avx512_core_available(), isa_includes(effective, cpu_isa::avx512_core));
  EXPECT_EQ(ds::native_bf16(), ds::isa_has_native_bf16(effective));
  EXPECT_EQ(ds::int8_sums_exactly(), ds::isa_sums_int8_exactly(effective));
  const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA");
  if (cap != nullptr && std::string(cap) == "AVX2") {
    EXPECT_EQ(effective, cpu_isa::avx2);
    EXPECT_FALSE(ds::avx512_core_available());
    EXPECT_FALSE(ds::native_bf16());
    EXPECT_FALSE(ds::int8_sums_exactly());
  }
}

}  // namespace
}  // namespace parity

#endif  // PARITY_HAVE_DNNL
