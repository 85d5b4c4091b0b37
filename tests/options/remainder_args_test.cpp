// Arity::kRemainder: an option that takes the rest of the command line (debug reduce's --check).
#include <gtest/gtest.h>

#include "options/args.h"

namespace parity::options {
namespace {

TEST(ArgParserRemainder, TakesEveryLaterTokenOptionsIncluded) {
  ArgParser p("parity debug reduce", "desc");
  p.add({.flags = {}, .dest = "model", .metavar = "MODEL"});
  p.add({.flags = {"--mode"}, .choices = {"bisect", "linear"}});
  p.add({.flags = {"--check"}, .metavar = "CMD", .arity = Arity::kRemainder});
  Args a = p.parse({"m.onnx", "--mode", "linear", "--check", "parity", "run", "x.onnx", "--mode", "--ref", "--", "y"});
  EXPECT_EQ(a.get("mode"), "linear");
  EXPECT_EQ(a.list("check"), (std::vector<std::string>{"parity", "run", "x.onnx", "--mode", "--ref", "--", "y"}));
  EXPECT_NE(p.help().find("--check CMD ..."), std::string::npos) << p.help();
  try {
    p.parse({"m.onnx", "--check"});
    FAIL() << "an empty command line was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--check expects a command line"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace parity::options
