#include "options/refused_option.h"

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace parity::options {
namespace {

ArgParser parser_with_refused() {
  ArgParser parser("t", "t");
  parser.add({.flags = {"--trt-min-shapes"}, .help = "min shapes", .arity = Arity::kOneOrMore});
  parser.add(refused_option("--trt-outputs", "--trt-outputs needs TensorRT; closest: --onnx-outputs"));
  return parser;
}

TEST(RefusedOption, GivingItFailsWithItsOneLine) {
  const ArgParser parser = parser_with_refused();
  const std::string message = testing::user_error_of([&] { parser.parse({"--trt-outputs", "mark", "all"}); });
  EXPECT_EQ(message, "--trt-outputs needs TensorRT; closest: --onnx-outputs");
  EXPECT_EQ(testing::user_error_of([&] { parser.parse({"--trt-outputs=y"}); }), message);
  // Absent, it changes nothing.
  EXPECT_TRUE(parser.parse({"--trt-min-shapes", "x:[1]"}).has("trt_min_shapes"));
}

TEST(RefusedOption, HelpAndTypoSuggestionsLeaveItOut) {
  const ArgParser parser = parser_with_refused();
  EXPECT_TRUE(is_refused(parser.options().back()));
  EXPECT_FALSE(is_refused(parser.options().front()));
  EXPECT_EQ(parser.help().find("--trt-outputs"), std::string::npos) << parser.help();
  const std::string typo = testing::user_error_of([&] { parser.parse({"--trt-outptus"}); });
  EXPECT_NE(typo.find("--trt-min-shapes"), std::string::npos) << typo;
  EXPECT_EQ(typo.find("--trt-outputs"), std::string::npos) << typo;
}

}  // namespace
}  // namespace parity::options
