#include "options/args.h"

#include <gtest/gtest.h>

namespace parity::options {
namespace {

ArgParser make_parser() {
  ArgParser p("parity test", "desc");
  p.add({.flags = {}, .dest = "model", .metavar = "MODEL"});
  p.add({.flags = {"--atol"}, .arity = Arity::kOneOrMore});
  p.add({.flags = {"--seed"}});
  p.add({.flags = {"--ref"}, .arity = Arity::kFlag});
  p.add({.flags = {"--ort"}, .arity = Arity::kFlag});
  p.add({.flags = {"--compare"}, .choices = {"simple", "indices"}, .default_value = "simple"});
  p.add({.flags = {"-v", "--verbose"}, .arity = Arity::kCount});
  return p;
}

TEST(ArgParser, ParsesPolygraphyStyle) {
  Args a = make_parser().parse({"m.onnx", "--ort", "--ref", "--atol", "1e-3", "y:-1e-2", "--seed=5", "-v", "-v"});
  EXPECT_EQ(a.get("model"), "m.onnx");
  EXPECT_EQ(a.list("atol"), (std::vector<std::string>{"1e-3", "y:-1e-2"}));
  EXPECT_EQ(a.get_int("seed"), 5);
  EXPECT_EQ(a.count("verbose"), 2);
  EXPECT_EQ(a.get("compare"), "simple");
  // Runner flags keep the order the user gave.
  EXPECT_EQ(a.order()[1], "ort");
  EXPECT_EQ(a.order()[2], "ref");
}

TEST(ArgParser, BundledCountFlagsCountEachLetter) {
  EXPECT_EQ(make_parser().parse({"m.onnx", "-vvv"}).count("verbose"), 3);
  EXPECT_EQ(make_parser().parse({"m.onnx", "-vv", "-v"}).count("verbose"), 3);
  // Only repeats of a counted short flag bundle; anything else stays unknown.
  EXPECT_THROW(make_parser().parse({"m.onnx", "-vx"}), Error);
}

TEST(ArgParser, OccurrencesKeepRepeatsInCommandLineOrder) {
  Args a = make_parser().parse({"m.onnx", "--ref", "--ort", "--ref", "-v"});
  EXPECT_EQ(a.order(), (std::vector<std::string>{"model", "ref", "ort", "verbose"}));
  EXPECT_EQ(a.occurrences(), (std::vector<std::string>{"model", "ref", "ort", "ref", "verbose"}));
}

TEST(ArgParser, ErrorsAreClear) {
  auto p = make_parser();
  try {
    p.parse({"m", "--atoll", "1"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("did you mean: --atol"), std::string::npos) << e.what();
  }
  EXPECT_THROW(p.parse({"m", "--compare", "bogus"}), Error);
  EXPECT_THROW(p.parse({"m", "--seed"}), Error);
  EXPECT_THROW(p.parse({"m", "extra"}), Error);
  EXPECT_THROW(parse_double("1.2.3", "--atol"), Error);
}

TEST(SplitNameValue, HandlesBracketsAndColonsInNames) {
  EXPECT_EQ(split_name_value("x:[1,3,224,224]"), (std::pair<std::string, std::string>{"x", "[1,3,224,224]"}));
  EXPECT_EQ(split_name_value("1e-3"), (std::pair<std::string, std::string>{"", "1e-3"}));
  EXPECT_EQ(split_name_value("input:0:[0,1]"), (std::pair<std::string, std::string>{"input:0", "[0,1]"}));
}

}  // namespace
}  // namespace parity::options
