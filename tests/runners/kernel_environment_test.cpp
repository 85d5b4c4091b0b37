// The ref runtime's $PARITY_<SWITCH> measuring switches, read by the runners layer.
#include "runners/kernel_environment.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "support/test_support.h"

namespace parity::testing {
namespace {

/// Sets an environment variable for one test and removes it after.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedVariable() { ::unsetenv(name_); }

 private:
  const char* name_;
};

TEST(KernelEnvironment, VariablesSetTheirSwitches) {
  EXPECT_TRUE(runners::kernel_options_from_environment() == runtime::KernelOptions{});
  ScopedVariable stem("PARITY_CONV_STEM_DIRECT", "off");
  ScopedVariable layout("PARITY_DNNL_LAYOUT", "pointwise");
  ScopedVariable swish("PARITY_CONV_SWISH", "post-op");
  const runtime::KernelOptions options = runners::kernel_options_from_environment();
  EXPECT_FALSE(options.conv_stem_direct);
  EXPECT_EQ(options.conv_layout, runtime::ConvActivationLayout::kPointwisePlain);
  EXPECT_FALSE(options.conv_separate_swish);
  EXPECT_TRUE(options.conv_depthwise_direct);
}

TEST(KernelEnvironment, AValueTheSwitchDoesNotTakeIsOneErrorLine) {
  ScopedVariable split("PARITY_CONV_CHANNEL_SPLIT", "sometimes");
  const std::string message = user_error_of([] { runners::kernel_options_from_environment(); });
  EXPECT_NE(message.find("$PARITY_CONV_CHANNEL_SPLIT"), std::string::npos) << message;
  EXPECT_NE(message.find("cost, off, always"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

TEST(KernelEnvironment, IsaCapFromTheOption) {
  EXPECT_EQ(runners::with_isa_cap({}, "avx2").isa_cap, runtime::KernelIsa::kAvx2);
  EXPECT_EQ(runners::with_isa_cap({}, "native").isa_cap, runtime::KernelIsa::kAvx512);
  const std::string message = user_error_of([] { runners::with_isa_cap({}, "avx3"); });
  EXPECT_NE(message.find("--isa must be native, avx512, avx2 or baseline, got 'avx3'"), std::string::npos) << message;
}

}  // namespace
}  // namespace parity::testing
