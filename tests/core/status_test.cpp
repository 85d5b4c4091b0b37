#include "core/status.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

TEST(ErrorContext, FailAtCarriesTheFieldsAndKeepsTheMessage) {
  try {
    fail_at({.node = "conv1", .tensor = "x", .file = "model.onnx"}, ErrorCode::kRuntime, "bad ", 3);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "bad 3");
    EXPECT_EQ(e.code(), ErrorCode::kRuntime);
    EXPECT_EQ(e.node(), "conv1");
    EXPECT_EQ(e.tensor(), "x");
    EXPECT_EQ(e.file(), "model.onnx");
  }
}

TEST(ErrorContext, PlainErrorsHaveNoFields) {
  const Error e(ErrorCode::kIo, "disk full");
  EXPECT_FALSE(e.node());
  EXPECT_FALSE(e.tensor());
  EXPECT_FALSE(e.file());
}

TEST(ErrorContext, CopiesChangeOnlyWhatTheySay) {
  const Error e(ErrorCode::kInvalidModel, "broken", {.tensor = "w"});
  const Error named = e.with_node("add1");
  EXPECT_STREQ(named.what(), "broken");
  EXPECT_EQ(named.node(), "add1");
  EXPECT_EQ(named.tensor(), "w");
  EXPECT_EQ(named.with_node("outer").node(), "outer");

  const Error prefixed = named.prefixed("Add node 'add1'");
  EXPECT_STREQ(prefixed.what(), "Add node 'add1': broken");
  EXPECT_EQ(prefixed.code(), ErrorCode::kInvalidModel);
  EXPECT_EQ(prefixed.node(), "add1");

  const Error filled = e.with_missing({.node = "n", .tensor = "other", .file = "f.npz"});
  EXPECT_STREQ(filled.what(), "broken");
  EXPECT_EQ(filled.node(), "n");
  EXPECT_EQ(filled.tensor(), "w");  // already set: kept
  EXPECT_EQ(filled.file(), "f.npz");
}

TEST(ErrorContext, WithErrorContextFillsErrorsThrownInside) {
  try {
    with_error_context({.file = "in.json"}, [] { fail_at({.tensor = "x"}, ErrorCode::kInvalidModel, "not JSON"); });
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "not JSON");
    EXPECT_EQ(e.file(), "in.json");
    EXPECT_EQ(e.tensor(), "x");
  }
  EXPECT_EQ(with_error_context({.file = "f"}, [] { return 7; }), 7);
}

TEST(ErrorContext, StatusAndResultCarryTheFields) {
  const Status s = capture_status([] { PARITY_CHECK_AT(false, {.node = "n1"}, kRuntime, "failed"); });
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.error().node(), "n1");
  EXPECT_EQ(s.message(), "failed");
  const Result<int> r = capture_result<int>([]() -> int { fail_at({.file = "a.onnx"}, ErrorCode::kNotFound, "gone"); });
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.error().file(), "a.onnx");
}

}  // namespace
}  // namespace parity
