// End-to-end checks of the CLI shell: help, version, final PASSED/FAILED line, exit codes.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace parity::testing {
namespace {

TEST(CliShell, VersionAndHelp) {
  auto v = run_parity({"--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.output.find("parity "), std::string::npos);
  auto h = run_parity({"--help"});
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.output.find("Commands:"), std::string::npos);
}

TEST(CliShell, UnknownCommandIsOneLineExit1) {
  auto r = run_parity({"frobnicate"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("unknown command 'frobnicate'"), std::string::npos);
}

}  // namespace
}  // namespace parity::testing
