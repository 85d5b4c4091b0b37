// KernelOptions: the switch table plans record, and the ISA cap's arithmetic.
#include "runtime/kernel_options.h"

#include <gtest/gtest.h>

namespace parity::testing {
namespace {

using runtime::KernelIsa;
using runtime::KernelOptions;

TEST(KernelOptions, EverySwitchRoundTripsThroughItsText) {
  KernelOptions changed;
  changed.se_scale_direct = false;
  changed.max_pool_direct = false;
  changed.global_pool_wide = false;
  changed.conv_layout = runtime::ConvActivationLayout::kPlain;
  changed.conv_separate_swish = false;
  changed.conv_stem_direct = false;
  changed.conv_pointwise_direct = false;
  changed.conv_depthwise_direct = false;
  changed.conv_point_product = false;
  changed.conv_expand_depthwise_ring = false;
  changed.conv_channel_split = runtime::ChannelSplitPolicy::kAlways;
  changed.concat_placement = false;
  changed.batch_norm_to_channels_last = false;
  const auto defaults = runtime::kernel_switches(KernelOptions{});
  const auto texts = runtime::kernel_switches(changed);
  ASSERT_EQ(texts.size(), runtime::kernel_switch_names().size());
  KernelOptions rebuilt;
  for (const auto& name : runtime::kernel_switch_names()) {
    ASSERT_TRUE(texts.count(name)) << name;
    EXPECT_NE(texts.at(name), defaults.at(name)) << name << ": every field above is off its default";
    ASSERT_TRUE(runtime::set_kernel_switch(rebuilt, name, texts.at(name)).is_ok()) << name;
  }
  EXPECT_TRUE(rebuilt == changed);
  EXPECT_EQ(defaults.at("conv_stem_direct"), "on");
  EXPECT_EQ(texts.at("conv_swish"), "post-op");
  EXPECT_EQ(texts.at("dnnl_layout"), "plain");
}

TEST(KernelOptions, UnknownNamesAndValuesSayWhatIsAllowed) {
  KernelOptions options;
  const Status name = runtime::set_kernel_switch(options, "conv_magic", "on");
  ASSERT_FALSE(name.is_ok());
  EXPECT_NE(name.message().find("unknown kernel switch 'conv_magic'"), std::string::npos) << name.message();
  EXPECT_NE(name.message().find("conv_stem_direct"), std::string::npos) << name.message();
  const Status value = runtime::set_kernel_switch(options, "conv_channel_split", "sometimes");
  ASSERT_FALSE(value.is_ok());
  EXPECT_NE(value.message().find("cannot be 'sometimes' (one of: cost, off, always)"), std::string::npos)
      << value.message();
  EXPECT_TRUE(options == KernelOptions{}) << "a refused setting changes nothing";
}

TEST(KernelIsa, EffectiveTierIsTheCpusLoweredToTheCap) {
  KernelOptions options;
  EXPECT_EQ(runtime::effective_kernel_isa(options), runtime::cpu_kernel_isa());
  options.isa_cap = KernelIsa::kBaseline;
  EXPECT_EQ(runtime::effective_kernel_isa(options), KernelIsa::kBaseline);
  options.isa_cap = KernelIsa::kAvx2;
  EXPECT_LE(runtime::effective_kernel_isa(options), KernelIsa::kAvx2);
  EXPECT_EQ(runtime::parse_kernel_isa("native"), KernelIsa::kAvx512);
  EXPECT_EQ(runtime::parse_kernel_isa("avx2"), KernelIsa::kAvx2);
  EXPECT_EQ(runtime::parse_kernel_isa("baseline"), KernelIsa::kBaseline);
  EXPECT_FALSE(runtime::parse_kernel_isa("avx3").has_value());
  for (KernelIsa isa : {KernelIsa::kBaseline, KernelIsa::kAvx2, KernelIsa::kAvx512})
    EXPECT_EQ(runtime::parse_kernel_isa(runtime::kernel_isa_name(isa)), isa);
  EXPECT_EQ(runtime::vector_kernel_tier(), runtime::kernel_isa_name(runtime::cpu_kernel_isa()));
}

}  // namespace
}  // namespace parity::testing
