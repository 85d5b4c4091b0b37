#include "compare/data_loader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/random_state.h"
#include "core/status.h"
#include "compare/fixture_npy.h"
#include "support/test_support.h"

namespace parity::compare {
namespace {

using parity::testing::base64_decode;
using parity::testing::polygraphy_fixtures_dir;
using parity::testing::read_file;

// Raw element bytes of a version 1.0 .npy file.
std::string npy_payload(const std::string& npy) {
  const size_t header_len = static_cast<unsigned char>(npy[8]) | (static_cast<unsigned char>(npy[9]) << 8);
  return npy.substr(10 + header_len);
}

TensorMetadata fixture_metadata() {
  TensorMetadata m;
  m.add("x", DType::kFloat32, DimShape({1, 3, 4, 4}));
  m.add("ids", DType::kInt64, DimShape({2, 3}));
  m.add("mask", DType::kBool, DimShape({5}));
  m.add("h", DType::kFloat16, DimShape({3}));
  m.add("k", DType::kInt32, DimShape({4}));
  return m;
}

TEST(DataLoaderTest, MatchesPolygraphyInputsBitForBit) {
  const auto json = nlohmann::json::parse(read_file(polygraphy_fixtures_dir() / "inputs_seed1.json"));
  ASSERT_EQ(json.size(), 2u);
  DataLoader loader;
  loader.seed(1).iterations(2).val_range("ids", {0, 10}).val_range("k", {-5, 5});
  loader.set_input_metadata(fixture_metadata());
  for (size_t it = 0; it < 2; ++it) {
    auto feed = loader.feed(it);
    ASSERT_TRUE(feed.has_value());
    ASSERT_EQ(feed->size(), 5u);
    for (const auto& [name, tensor] : *feed) {
      SCOPED_TRACE("iteration " + std::to_string(it) + " input " + name);
      const std::string expected = npy_payload(base64_decode(json[it][name]["array"].get<std::string>()));
      ASSERT_EQ(expected.size(), tensor.size_bytes());
      EXPECT_EQ(0, std::memcmp(expected.data(), tensor.raw_data(), expected.size()));
    }
  }
  EXPECT_FALSE(loader.feed(2).has_value());
}

TEST(DataLoaderTest, DynamicDimsTakeBoundsOrOneAndOverridesApply) {
  TensorMetadata m;
  m.add("a", DType::kFloat32, DimShape({Dim::dynamic("batch"), 3}));
  m.add("b", DType::kFloat32, DimShape({Dim::dynamic("n", 2, 8)}));
  DataLoader loader;
  loader.input_shape("a", {4, 3});
  loader.set_input_metadata(m);
  TensorMap feed = loader.generate(0);
  EXPECT_EQ(feed.at("a").shape(), (Shape{4, 3}));
  EXPECT_EQ(feed.at("b").shape(), (Shape{2}));
}

TEST(DataLoaderTest, ShapeTensorInputGetsTheShapeAsValue) {
  TensorMetadata m;
  m.add("shape", DType::kInt64, DimShape({3}));
  DataLoader loader;
  loader.input_shape("shape", {1, 2, 5});
  loader.set_input_metadata(m);
  EXPECT_EQ(loader.generate(0).at("shape").to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 5}));
}

TEST(DataLoaderTest, OverridesNamingNoInputAreErrorsListingInputs) {
  DataLoader loader;
  loader.val_range("nope", {0, 1});
  try {
    loader.set_input_metadata(fixture_metadata());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("'nope'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("x, ids, mask, h, k"), std::string::npos) << e.what();
  }
  DataLoader bad_shape;
  bad_shape.input_shape("x", {1, 3, 5, 5});
  EXPECT_THROW(bad_shape.set_input_metadata(fixture_metadata()), Error);
}

TEST(RandomStateTest, MatchesNumpyForEveryIntegerWidth) {
  // Values from numpy 1.24: RandomState(7).randint(-3, 100, size=6, dtype=...) and friends.
  NumpyRandomState u8(7);
  EXPECT_EQ(u8.randint(-3, 99, {6}, DType::kInt8).to_vector<int8_t>(),
            (std::vector<int8_t>{44, 5, 16, 65, 97, 47}));
  NumpyRandomState u16(7);
  EXPECT_EQ(u16.randint(-3, 999, {6}, DType::kInt16).to_vector<int16_t>(),
            (std::vector<int16_t>{172, 901, 193, 559, 534, 933}));
  NumpyRandomState u64(7);
  EXPECT_EQ(u64.randint(0, (int64_t{1} << 40), {3}, DType::kInt64).to_vector<int64_t>(),
            (std::vector<int64_t>{752595690692, 108744157686, 291964244179}));
  NumpyRandomState b(7);
  EXPECT_EQ(b.randint(0, 1, {6}, DType::kBool).to_vector<bool>(),
            (std::vector<bool>{true, true, true, true, false, true}));
}

TEST(RandomStateTest, DoubleToHalfRoundsOnce) {
  // 1 + 2^-11 + 2^-40 is just above the halfway point between two halves; through float32 the
  // 2^-40 is lost and the tie rounds to even (down). numpy rounds up.
  const double v = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(double_to_half_bits(v), 0x3c01);
  EXPECT_EQ(double_to_half_bits(65520.0), 0x7c00);
  EXPECT_EQ(double_to_half_bits(std::ldexp(1.0, -24)), 0x0001);
  EXPECT_EQ(double_to_half_bits(-2.0), 0xc000);
}

}  // namespace
}  // namespace parity::compare
