#include "core/formats/npz.h"

#include <gtest/gtest.h>

#include "core/formats/npy.h"
#include "support/test_support.h"

namespace parity {
namespace {

using testing::source_dir;

TensorMap every_dtype() {
  TensorMap m;
  m.set("f32", Tensor::from_vector<float>({2, 3}, {0.1f, -2.f, 3.f, 1e-30f, -0.f, 65504.f}));
  m.set("f64", Tensor::from_vector<double>({3}, {1e300, -1e-300, 0.5}));
  m.set("f16", Tensor::from_vector<Float16>({2}, {Float16(1.5f), Float16(-0.25f)}));
  m.set("i8", Tensor::from_vector<int8_t>({4}, {-128, 127, 0, 5}));
  m.set("i16", Tensor::from_vector<int16_t>({1, 2}, {-32768, 32767}));
  m.set("i32", Tensor::scalar<int32_t>(-7));
  m.set("i64", Tensor::from_vector<int64_t>({2}, {INT64_MIN, INT64_MAX}));
  m.set("u8", Tensor::from_vector<uint8_t>({3}, {0, 128, 255}));
  m.set("u16", Tensor::from_vector<uint16_t>({1}, {65535}));
  m.set("u32", Tensor::from_vector<uint32_t>({2}, {0, 4294967295u}));
  m.set("u64", Tensor::from_vector<uint64_t>({1}, {UINT64_MAX}));
  m.set("b", Tensor::from_vector<bool>({2, 2}, {true, false, false, true}));
  m.set("c64", Tensor::from_vector<std::complex<float>>({1}, {{1.f, -2.f}}));
  m.set("c128", Tensor::from_vector<std::complex<double>>({2}, {{1, 2}, {-3, 4}}));
  m.set("empty", Tensor(DType::kFloat32, {0, 3}));
  m.set("scalar_bool", Tensor::scalar<bool>(true));
  return m;
}

void expect_same(const TensorMap& a, const TensorMap& b) {
  ASSERT_EQ(a.names(), b.names());
  for (const auto& [name, t] : a) EXPECT_TRUE(t.bit_equal(b.at(name))) << name;
}

TEST(Npz, RoundTripsEveryDtypeStoredAndCompressed) {
  testing::TempDir dir;
  const TensorMap m = every_dtype();
  for (bool compressed : {false, true}) {
    const auto path = (dir / (compressed ? "c.npz" : "s.npz")).string();
    write_npz(path, m, compressed);
    expect_same(m, read_npz(path));
  }
}

TEST(Npz, ReadsNumpyArchivesInMemberOrder) {
  for (const char* name : {"stored.npz", "compressed.npz"}) {
    const TensorMap m = read_npz((source_dir() / "tests/data/formats" / name).string());
    EXPECT_EQ(m.names(), (std::vector<std::string>{"b", "a"}));
    EXPECT_EQ(m.at("b").to_vector<int16_t>(), (std::vector<int16_t>{0, 1, 2, 3}));
    EXPECT_EQ(m.at("a").shape(), (Shape{2, 2}));
  }
}

TEST(Npz, EmptyArchive) {
  testing::TempDir dir;
  const auto path = (dir / "e.npz").string();
  write_npz(path, TensorMap{});
  EXPECT_TRUE(read_npz(path).empty());
}

TEST(Npz, MembersAreNpyFiles) {
  testing::TempDir dir;
  const auto path = (dir / "m.npz").string();
  TensorMap m;
  m.set("x", Tensor::from_vector<float>({1, 3}, {1, 2, 3}));
  write_npz(path, m, true);
  const auto members = zip_members_from_bytes(testing::read_file(path), path);
  ASSERT_EQ(members.size(), 1u);
  EXPECT_EQ(members[0].first, "x.npy");
  EXPECT_EQ(members[0].second, npy_to_bytes(m.at("x")));
}

TEST(Npz, CorruptArchivesFailClearly) {
  testing::TempDir dir;
  const std::string good = testing::read_file(source_dir() / "tests/data/formats/compressed.npz");
  auto error_of = [&](const std::string& bytes) -> std::string {
    const auto path = (dir / "bad.npz").string();
    testing::write_file(path, bytes);
    try {
      read_npz(path);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidModel);
      EXPECT_EQ(e.file(), path);
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(error_of(good.substr(0, good.size() / 2)).find("not a valid .npz"), std::string::npos);
  EXPECT_NE(error_of("PK\x03\x04garbage").find("not a valid .npz"), std::string::npos);
  std::string flipped = good;
  flipped[60] = static_cast<char>(flipped[60] ^ 0x55);  // inside the first member's deflate data
  EXPECT_NE(error_of(flipped).find("bad.npz"), std::string::npos);
}

TEST(Npz, UnwritableTensorLeavesNoFile) {
  testing::TempDir dir;
  TensorMap m;
  m.set("s", Tensor::from_vector<std::string>({1}, {"numpy needs pickling for this"}));
  const auto path = dir / "x.npz";
  try {
    write_npz(path.string(), m);
    ADD_FAILURE() << "a string tensor was written";
  } catch (const Error& e) {
    EXPECT_EQ(e.tensor(), "s");
    EXPECT_EQ(e.file(), path.string());
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace parity
