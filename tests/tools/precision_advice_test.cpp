// convert's one-line notes for precisions that cannot pay on a CPU (tools/precision_advice.h),
// judged on injected CPU facts: an AVX2-only CPU, and one with native bf16 and VNNI.
#include "tools/precision_advice.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

tools::PrecisionHardware avx2_only() {
  tools::PrecisionHardware hardware;
  hardware.isa = "avx2";
  return hardware;
}

tools::PrecisionHardware sapphire_rapids() {
  tools::PrecisionHardware hardware;
  hardware.native_bf16 = true;
  hardware.native_int8 = true;
  hardware.isa = "avx512_core_amx";
  return hardware;
}

TEST(PrecisionAdvice, Bf16AndInt8WithoutNativeInstructionsSayExpectFp32Speed) {
  runtime::ReducedPrecisionConfig config;
  config.bf16 = true;
  config.int8 = true;
  const auto notes = tools::precision_speed_notes(config, avx2_only());
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0].text, "bf16: no native bf16 on this CPU (oneDNN ISA avx2): the bf16 layers compute in fp32 on rounded "
                      "operands: expect fp32 speed");
  EXPECT_NE(notes[1].text.find("int8: no VNNI on this CPU (oneDNN ISA avx2)"), std::string::npos) << notes[1].text;
  EXPECT_NE(notes[1].text.find("run int8 on u8 sources"), std::string::npos) << notes[1].text;
  for (const auto& note : notes) EXPECT_EQ(note.text.find('\n'), std::string::npos);
  EXPECT_TRUE(tools::precision_speed_notes(config, sapphire_rapids()).empty());
}

TEST(PrecisionAdvice, PerLayerRequestsCountAndFp32PlansGetNoNote) {
  runtime::ReducedPrecisionConfig config;
  EXPECT_TRUE(tools::precision_speed_notes(config, avx2_only()).empty());
  config.layer_precisions["conv1"] = DType::kBFloat16;
  ASSERT_EQ(tools::precision_speed_notes(config, avx2_only()).size(), 1u);
  EXPECT_EQ(tools::precision_speed_notes(config, avx2_only())[0].text.rfind("bf16: ", 0), 0u);
  EXPECT_TRUE(tools::precision_speed_notes(config, avx2_only())[0].warning);
  // fp16 layers compute in fp32 on rounded operands on every CPU parity runs on today.
  runtime::ReducedPrecisionConfig fp16;
  fp16.fp16 = true;
  ASSERT_EQ(tools::precision_speed_notes(fp16, sapphire_rapids()).size(), 1u);
  EXPECT_FALSE(tools::precision_speed_notes(fp16, sapphire_rapids())[0].warning);  // it still pays in size
  tools::PrecisionHardware native_fp16 = sapphire_rapids();
  native_fp16.native_fp16 = true;
  EXPECT_TRUE(tools::precision_speed_notes(fp16, native_fp16).empty());
}

}  // namespace
}  // namespace parity
