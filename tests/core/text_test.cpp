#include "core/text.h"

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace parity {
namespace {

using Items = std::vector<std::string>;

// The message of the kInvalidArgument error `fn` throws ("" when it does not throw).
template <typename Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
    return e.what();
  }
  return "";
}

TEST(Text, TrimDropsBlanksAtBothEnds) {
  EXPECT_EQ(trim("  a b \t\r"), "a b");
  EXPECT_EQ(trim(" \t "), "");
  EXPECT_EQ(trim("x"), "x");
}

TEST(Text, SplitListTakesBracketsOrNone) {
  EXPECT_EQ(split_list("[1, 2 ,3]", "--x"), (Items{"1", "2", "3"}));
  EXPECT_EQ(split_list("(a,b)", "--x"), (Items{"a", "b"}));
  EXPECT_EQ(split_list("ref,ort", "--x"), (Items{"ref", "ort"}));
  EXPECT_EQ(split_list("[]", "--x"), Items{});
  EXPECT_EQ(split_list("", "--x"), Items{});
  // Empty items stay, for the caller to refuse or drop.
  EXPECT_EQ(split_list("1,,2,", "--x"), (Items{"1", "", "2", ""}));
  EXPECT_EQ(error_of([] { split_list("[1,2", "--val-range"); }), "--val-range: unbalanced brackets in '[1,2'");
  EXPECT_EQ(error_of([] { split_list("(1,2]", "--val-range"); }), "--val-range: unbalanced brackets in '(1,2]'");
}

TEST(Text, SplitNameValueSplitsAtTheLastColonOutsideBrackets) {
  EXPECT_EQ(split_name_value("x:[1,3]"), (std::pair<std::string, std::string>{"x", "[1,3]"}));
  EXPECT_EQ(split_name_value("in:0:[0,1]"), (std::pair<std::string, std::string>{"in:0", "[0,1]"}));
  EXPECT_EQ(split_name_value("1e-3"), (std::pair<std::string, std::string>{"", "1e-3"}));
  EXPECT_EQ(split_name_value("x:(1,'a:b')"), (std::pair<std::string, std::string>{"x", "(1,'a:b')"}));
}

TEST(Text, NumbersMustBeWhole) {
  EXPECT_EQ(parse_int("-12", "--n"), -12);
  EXPECT_DOUBLE_EQ(parse_double("1e-3", "--atol"), 1e-3);
  EXPECT_EQ(error_of([] { parse_int("3x", "--seed"); }), "invalid integer '3x' for --seed");
  EXPECT_EQ(error_of([] { parse_double("", "--atol"); }), "invalid number '' for --atol");
  EXPECT_EQ(error_of([] { parse_int("99999999999999999999", "--n"); }), "invalid integer '99999999999999999999' for --n");
}

TEST(Text, DimShapesTakeEverySpelling) {
  const DimShape s = parse_dim_shape(" [1, 'batch', ?, -1] ", "--inputs x");
  ASSERT_EQ(s.dims.size(), 4u);
  EXPECT_EQ(s.dims[0], Dim(1));
  EXPECT_EQ(s.dims[1], Dim::dynamic("batch"));
  EXPECT_EQ(s.dims[2], Dim::dynamic());
  EXPECT_EQ(s.dims[3], Dim::dynamic());
  EXPECT_EQ(parse_dim_shape("(2,3)", "s").dims, (DimShape{Dim(2), Dim(3)}.dims));
  EXPECT_EQ(parse_dim_shape("2,3", "s").dims, (DimShape{Dim(2), Dim(3)}.dims));
  EXPECT_EQ(parse_dim_shape("1x3x224x224", "s").dims, (DimShape{Dim(1), Dim(3), Dim(224), Dim(224)}.dims));
  // Only digits joined by 'x' are the compact form: a name with an 'x' stays a name.
  EXPECT_EQ(parse_dim_shape("max_len", "s").dims, (DimShape{Dim::dynamic("max_len")}.dims));
  EXPECT_TRUE(parse_dim_shape("[]", "s").dims.empty());
  EXPECT_EQ(error_of([] { parse_dim_shape("[1,,2]", "--inputs x"); }), "--inputs x: empty dimension in shape '[1,,2]'");
  EXPECT_EQ(error_of([] { parse_dim_shape("[1,-2]", "--inputs x"); }),
            "--inputs x: negative dimension -2 in shape '[1,-2]'");
  EXPECT_EQ(error_of([] { parse_dim_shape("[1,2", "--inputs x"); }), "--inputs x: unbalanced brackets in '[1,2'");
}

TEST(Text, ConcreteShapesRefuseDynamicDimensions) {
  EXPECT_EQ(parse_shape("[1,3,8,8]", "--input-shapes"), (Shape{1, 3, 8, 8}));
  EXPECT_EQ(parse_shape("[]", "--input-shapes"), Shape{});
  EXPECT_EQ(error_of([] { parse_shape("[1,?]", "--input-shapes x:[1,?]"); }),
            "--input-shapes x:[1,?]: shape '[1,?]' must have a number >= 0 for every dimension");
  EXPECT_EQ(error_of([] { parse_shape("[1,-1]", "--input-shapes"); }),
            "--input-shapes: shape '[1,-1]' must have a number >= 0 for every dimension");
}

TEST(Text, SizesTakeBinarySuffixes) {
  EXPECT_EQ(parse_size("1024", "x"), 1024u);
  EXPECT_EQ(parse_size("4K", "x"), 4096u);
  EXPECT_EQ(parse_size("4kb", "x"), 4096u);
  EXPECT_EQ(parse_size("1.5M", "x"), 1572864u);
  EXPECT_EQ(parse_size("2g", "x"), uint64_t{2} << 30);
  EXPECT_EQ(error_of([] { parse_size("12 apples", "--threshold"); }),
            "invalid size '12 apples' for --threshold; use a byte count with an optional K, M or G suffix");
  EXPECT_EQ(error_of([] { parse_size("-3", "--threshold"); }), "invalid size '-3' for --threshold");
}

TEST(Text, ScaleBytesPicksTheLargestUnitWithinItsBounds) {
  const ScaledBytes small = scale_bytes(512);
  EXPECT_EQ(small.power, 0);
  EXPECT_STREQ(small.unit, "bytes");
  EXPECT_EQ(small.value, 512);
  const ScaledBytes mib = scale_bytes(3.0 * (1 << 20));
  EXPECT_STREQ(mib.unit, "MiB");
  EXPECT_EQ(mib.value, 3.0);
  EXPECT_STREQ(scale_bytes(512, /*smallest=*/1).unit, "KiB");
  EXPECT_EQ(scale_bytes(512, 1).value, 0.5);
  EXPECT_STREQ(scale_bytes(5.0 * (uint64_t{1} << 40), 0, 3).unit, "GiB");
  EXPECT_EQ(scale_bytes(5.0 * (uint64_t{1} << 40), 0, 3).value, 5120.0);
  EXPECT_STREQ(scale_bytes(1 << 10, 2, 2).unit, "MiB");
}

}  // namespace
}  // namespace parity
