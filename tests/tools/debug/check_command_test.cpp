// The external check: exit status, --fail-code, --ignore-fail-code, --fail-regex, placeholders,
// and the errors of a command that cannot run.
#include "tools/debug/check_command.h"

#include <gtest/gtest.h>

#include "core/status.h"

namespace parity::tools::debug {
namespace {

CheckOutcome run_sh(const std::string& script, CheckCommand check = {}) {
  check.argv = {"sh", "-c", script};
  return run_check_command(check, check.argv);
}

TEST(CheckCommand, ExitStatusCodesAndRegexDecide) {
  EXPECT_FALSE(run_sh("exit 0").failed);
  const auto failed = run_sh("echo out; echo err >&2; exit 3");
  EXPECT_TRUE(failed.failed);
  EXPECT_EQ(failed.exit_status, 3);
  EXPECT_EQ(failed.output, "out\nerr\n");
  EXPECT_FALSE(run_sh("exit 3", {.fail_codes = {4}}).failed);
  EXPECT_TRUE(run_sh("exit 4", {.fail_codes = {4}}).failed);
  EXPECT_FALSE(run_sh("exit 3", {.ignore_fail_codes = {3}}).failed);
  EXPECT_FALSE(run_sh("echo other; exit 1", {.fail_regex = {"Segmentation"}}).failed);
  EXPECT_TRUE(run_sh("echo Segmentation fault; exit 1", {.fail_regex = {"Segm.*fault"}}).failed);
  // As Polygraphy: without --fail-code the regex alone decides, even on status 0 ...
  EXPECT_TRUE(run_sh("echo Segmentation fault; exit 0", {.fail_regex = {"Segm.*fault"}}).failed);
  // ... with one, the status must be listed too (test_reduce_custom_fail_message's --fail-code=0).
  EXPECT_TRUE(run_sh("echo Segmentation fault; exit 0", {.fail_codes = {0}, .fail_regex = {"Segm"}}).failed);
  EXPECT_FALSE(run_sh("echo fine; exit 0", {.fail_codes = {0}, .fail_regex = {"Segm"}}).failed);
  EXPECT_FALSE(run_sh("echo Segmentation fault; exit 2", {.fail_codes = {0}, .fail_regex = {"Segm"}}).failed);
  EXPECT_FALSE(run_sh("echo Segmentation fault; exit 3", {.ignore_fail_codes = {3}, .fail_regex = {"Segm"}}).failed);
  EXPECT_EQ(run_sh("kill -9 $$").exit_status, 128 + 9);
}

TEST(CheckCommand, PlaceholdersAndBadCommands) {
  EXPECT_EQ(substitute({"run", "{model}", "--x={inputs},{model}"}, {{"model", "m.onnx"}, {"inputs", "i.json"}}),
            (std::vector<std::string>{"run", "m.onnx", "--x=i.json,m.onnx"}));
  EXPECT_THROW(validate_check_command({.argv = {"no-such-command-xyz"}}), Error);
  EXPECT_THROW(validate_check_command({.argv = {}}), Error);
  EXPECT_THROW(validate_check_command({.argv = {"true"}, .fail_regex = {"("}}), Error);
  EXPECT_NO_THROW(validate_check_command({.argv = {"true"}}));
}

}  // namespace
}  // namespace parity::tools::debug
