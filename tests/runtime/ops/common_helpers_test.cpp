#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>

#include "runtime/ops/common/axis.h"
#include "runtime/ops/common/broadcast.h"
#include "runtime/ops/common/dispatch.h"
#include "runtime/ops/common/float_index.h"

namespace parity::runtime::ops {
namespace {

// Only node_label/fail are needed by the helpers under test.
struct FakeWhere {
  std::string node_label() const { return "Fake node 'n'"; }
  std::string node_error_name() const { return "n"; }
  template <typename... Args>
  [[noreturn]] void fail(const Args&... args) const {
    ::parity::fail(ErrorCode::kRuntime, node_label(), ": ", args...);
  }
};

TEST(Broadcast, Shapes) {
  std::vector<Shape> s = {{2, 1, 3}, {4, 1}, {}};
  EXPECT_EQ(*try_broadcast_shapes(s), (Shape{2, 4, 3}));
  std::vector<Shape> empty = {{0, 3}, {1, 3}};
  EXPECT_EQ(*try_broadcast_shapes(empty), (Shape{0, 3}));
  std::vector<Shape> one_to_zero = {{1}, {0}};
  EXPECT_EQ(*try_broadcast_shapes(one_to_zero), (Shape{0}));
  std::vector<Shape> bad = {{2, 3}, {3, 2}};
  EXPECT_FALSE(try_broadcast_shapes(bad).has_value());
  std::vector<Shape> none;
  EXPECT_EQ(*try_broadcast_shapes(none), Shape{});
}

TEST(Broadcast, Strides) {
  EXPECT_EQ(broadcast_strides({3, 1}, {2, 3, 4}), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(broadcast_strides({2, 3, 4}, {2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_TRUE(broadcasts_to({3, 1}, {2, 3, 4}));
  EXPECT_FALSE(broadcasts_to({2, 3, 4}, {3, 4}));
  EXPECT_FALSE(broadcasts_to({5}, {3, 4}));
}

TEST(Broadcast, ForEachVisitsEveryElementWithRightOffsets) {
  const Shape out = {2, 3, 4};
  std::array<Shape, 3> in = {Shape{2, 3, 4}, Shape{3, 1}, Shape{2, 1, 4}};
  int64_t count = 0;
  for_each_broadcast(out, in, [&](int64_t i, const std::array<int64_t, 3>& off) {
    const int64_t a = i / 12, b = (i / 4) % 3, c = i % 4;
    EXPECT_EQ(i, count);
    EXPECT_EQ(off[0], i);
    EXPECT_EQ(off[1], b);
    EXPECT_EQ(off[2], a * 4 + c);
    ++count;
  });
  EXPECT_EQ(count, 24);
}

TEST(Broadcast, ForEachScalarAndEmpty) {
  int calls = 0;
  for_each_broadcast(Shape{}, std::array<Shape, 1>{Shape{}}, [&](int64_t i, const std::array<int64_t, 1>& o) {
    EXPECT_EQ(i, 0);
    EXPECT_EQ(o[0], 0);
    ++calls;
  });
  EXPECT_EQ(calls, 1);
  for_each_broadcast(Shape{3, 0}, std::array<Shape, 1>{Shape{1}}, [&](int64_t, const auto&) { ++calls; });
  EXPECT_EQ(calls, 1);
}

TEST(SampleIndex, FiniteCoordinatesConvertAndTheRestLandFarOutside) {
  EXPECT_EQ(sample_index(3.0), 3);
  EXPECT_EQ(sample_index(-2.0), -2);
  EXPECT_EQ(sample_index(0.0), 0);
  EXPECT_EQ(sample_index(std::nan("")), -kFarOutsideIndex);
  EXPECT_EQ(sample_index(std::numeric_limits<double>::infinity()), kFarOutsideIndex);
  EXPECT_EQ(sample_index(-std::numeric_limits<double>::infinity()), -kFarOutsideIndex);
  EXPECT_EQ(sample_index(3e38), kFarOutsideIndex);
  EXPECT_EQ(sample_index(-3e38), -kFarOutsideIndex);
  // Bicubic taps reach 2 past the position: still no overflow.
  EXPECT_GT(sample_index(1e300) + 2, 0);
}

TEST(FitsInt64, OnlyFiniteValuesInsideTheRange) {
  EXPECT_TRUE(fits_int64(0.0));
  EXPECT_TRUE(fits_int64(-0x1p63));
  EXPECT_TRUE(fits_int64(9.2e18));
  EXPECT_FALSE(fits_int64(0x1p63));
  EXPECT_FALSE(fits_int64(-0x1p64));
  EXPECT_FALSE(fits_int64(std::nan("")));
  EXPECT_FALSE(fits_int64(std::numeric_limits<double>::infinity()));
}

TEST(Axis, Normalize) {
  FakeWhere w;
  EXPECT_EQ(normalize_axis(-1, 3, w), 2);
  EXPECT_EQ(normalize_axis(0, 3, w), 0);
  EXPECT_THROW(normalize_axis(3, 3, w), Error);
  EXPECT_THROW(normalize_axis(-4, 3, w), Error);
  EXPECT_EQ(normalize_axes({-1, 0}, 2, w), (std::vector<int64_t>{1, 0}));
  EXPECT_THROW(normalize_axes({1, -1}, 2, w), Error);
  EXPECT_EQ(size_to_axis({2, 3, 4}, 1), 2);
  EXPECT_EQ(size_from_axis({2, 3, 4}, 1), 12);
  EXPECT_EQ(size_from_axis({2, 3, 4}, 3), 1);
}

TEST(Dispatch, SupportedAndUnsupported) {
  FakeWhere w;
  DType seen = DType::kUndefined;
  dispatch_dtype<FloatTypes>(DType::kFloat16, w, [&](auto tag) {
    using T = typename decltype(tag)::type;
    static_assert(std::is_same_v<compute_t<T>, float> || std::is_same_v<compute_t<T>, double>);
    seen = dtype_of_v<T>;
  });
  EXPECT_EQ(seen, DType::kFloat16);
  try {
    dispatch_dtype<FloatTypes>(DType::kInt32, w, [](auto) {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("int32"), std::string::npos);
    EXPECT_EQ(e.node(), "n");
  }
}

}  // namespace
}  // namespace parity::runtime::ops
