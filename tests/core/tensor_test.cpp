#include "core/tensor.h"

#include <gtest/gtest.h>

#include "core/allocation_limit.h"
#include "core/metadata.h"
#include "core/status.h"

namespace parity {
namespace {

TEST(Tensor, ScalarAndZeroSize) {
  Tensor s = Tensor::scalar<float>(3.5f);
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.data<float>()[0], 3.5f);
  Tensor z(DType::kInt64, {2, 0, 3});
  EXPECT_EQ(z.numel(), 0);
  EXPECT_EQ(z.size_bytes(), 0u);
  EXPECT_TRUE(z.clone().bit_equal(z));
}

TEST(Tensor, ShallowCopyDeepClone) {
  Tensor a = Tensor::from_vector<int32_t>({2, 2}, {1, 2, 3, 4});
  Tensor b = a;
  Tensor c = a.clone();
  a.data<int32_t>()[0] = 9;
  EXPECT_EQ(b.data<int32_t>()[0], 9);
  EXPECT_EQ(c.data<int32_t>()[0], 1);
  Tensor moved = std::move(c);
  EXPECT_EQ(moved.data<int32_t>()[3], 4);
}

TEST(Tensor, WrongTypedAccessIsInternalError) {
  Tensor a(DType::kFloat32, {2});
  try {
    (void)a.data<int64_t>();
    FAIL();
  } catch (const Error& e) {
    EXPECT_TRUE(e.is_internal());
  }
}

TEST(Tensor, StringsAndCast) {
  Tensor s = Tensor::from_vector<std::string>({2}, {"a", "bc"});
  EXPECT_EQ(s.clone().values<std::string>()[1], "bc");
  Tensor f = Tensor::from_vector<float>({3}, {1.5f, -2.5f, 0.0f});
  Tensor i = f.cast(DType::kInt32);
  EXPECT_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{1, -2, 0}));
  Tensor h = f.cast(DType::kFloat16);
  EXPECT_EQ(h.cast(DType::kFloat32).to_vector<float>(), f.to_vector<float>());
  EXPECT_THROW(s.cast(DType::kFloat32), Error);
}

TEST(Tensor, ReshapeChecksCount) {
  Tensor a(DType::kFloat32, {2, 3});
  EXPECT_EQ(a.reshaped({3, 2}).shape(), (Shape{3, 2}));
  EXPECT_THROW(a.reshaped({4}), Error);
  EXPECT_THROW(Tensor(DType::kFloat32, {-1}), Error);
}

TEST(Tensor, AllocationsAboveTheCapAreOneErrorNamingTheShape) {
  const size_t previous = set_max_tensor_bytes(4096);
  EXPECT_NO_THROW(Tensor(DType::kFloat32, {1024}));
  try {
    Tensor(DType::kFloat32, {2, 1024});
    ADD_FAILURE() << "8 KiB passed a 4 KiB cap";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("float32 tensor of shape (2, 1024) needs"), std::string::npos) << e.what();
  }
  EXPECT_THROW(checked_tensor_bytes(DType::kInt64, {513}), Error);
  EXPECT_EQ(set_max_tensor_bytes(previous), 4096u);
  EXPECT_NO_THROW(Tensor(DType::kFloat32, {2, 1024}));
}

TEST(TensorMetadata, PrintsLikePolygraphy) {
  TensorMetadata m;
  m.add("x", DType::kFloat32, {1, 3, 224, 224});
  EXPECT_EQ(m.to_string(), "{x [dtype=float32, shape=(1, 3, 224, 224)]}");
  m.add("ids", DType::kInt64, {Dim::dynamic("batch", 1, 8), 3});
  EXPECT_EQ(m.at("ids").to_string(), "ids [dtype=int64, shape=('batch'[1..8], 3)]");
  EXPECT_TRUE(m.at("ids").shape.accepts({4, 3}));
  EXPECT_FALSE(m.at("ids").shape.accepts({9, 3}));
  EXPECT_FALSE(m.at("ids").shape.accepts({4, 2}));
  EXPECT_EQ(m.names(), (std::vector<std::string>{"x", "ids"}));
  try {
    m.at("y");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("available: x, ids"), std::string::npos);
  }
}

}  // namespace
}  // namespace parity
