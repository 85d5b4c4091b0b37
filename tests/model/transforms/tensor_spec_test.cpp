#include "model/transforms/tensor_spec.h"

#include <gtest/gtest.h>

namespace parity::model::transforms {
namespace {

TEST(TensorSpec, ParsesNameShapeDtype) {
  const TensorSpec s = parse_input_spec("x:[1,3,'N',-1]:float16");
  EXPECT_EQ(s.name, "x");
  ASSERT_TRUE(s.dtype.has_value());
  EXPECT_EQ(*s.dtype, DType::kFloat16);
  ASSERT_TRUE(s.shape.has_value());
  ASSERT_EQ(s.shape->dims.size(), 4u);
  EXPECT_EQ(s.shape->dims[0].value, 1);
  EXPECT_EQ(s.shape->dims[2].symbol, "N");
  EXPECT_FALSE(s.shape->dims[3].is_static());
}

TEST(TensorSpec, AutoFieldsAndNamesWithColons) {
  const TensorSpec s = parse_input_spec("conv:0:auto:auto");
  EXPECT_EQ(s.name, "conv:0");
  EXPECT_FALSE(s.dtype.has_value());
  EXPECT_FALSE(s.shape.has_value());
  const TensorSpec bare = parse_input_spec("y");
  EXPECT_EQ(bare.name, "y");
  EXPECT_FALSE(bare.shape.has_value());
  const TensorSpec out = parse_output_spec("y:int64");
  EXPECT_EQ(out.name, "y");
  EXPECT_EQ(*out.dtype, DType::kInt64);
  EXPECT_EQ(parse_input_spec("x:[2,3]").shape->dims.size(), 2u);
  EXPECT_EQ(*parse_input_spec("x:float32").dtype, DType::kFloat32);
  EXPECT_TRUE(parse_input_spec("s:[]:float32").shape->dims.empty());
}

TEST(TensorSpec, BadFieldsNameTheOption) {
  try {
    parse_input_spec("x:[1,3:float32");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  }
  try {
    parse_output_spec("y:floaty");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--outputs y: unknown dtype 'floaty'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_input_spec("x:[1,-3]:float32"), Error);
}

}  // namespace
}  // namespace parity::model::transforms
