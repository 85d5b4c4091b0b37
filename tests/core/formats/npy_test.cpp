#include "core/formats/npy.h"

#include <gtest/gtest.h>

#include "core/formats/npz.h"
#include "support/test_support.h"

namespace parity {
namespace {

using testing::read_file;
using testing::source_dir;

std::vector<std::pair<std::string, std::string>> numpy_written_files() {
  const auto path = source_dir() / "tests/data/formats/npy_by_dtype.zip";
  return zip_members_from_bytes(read_file(path), path.string());
}

std::string member(const std::string& name) {
  for (auto& [n, data] : numpy_written_files())
    if (n == name) return data;
  ADD_FAILURE() << "no fixture member " << name;
  return {};
}

TEST(Npy, EveryNumpyDtypeRoundTripsByteForByte) {
  int checked = 0;
  for (const auto& [name, bytes] : numpy_written_files()) {
    const bool odd = name.rfind("fortran", 0) == 0 || name.rfind("v2_", 0) == 0 ||
                     name.rfind("v3_", 0) == 0 || name.rfind("big_endian", 0) == 0 ||
                     name.rfind("unicode", 0) == 0;
    if (odd) continue;
    SCOPED_TRACE(name);
    const Tensor t = npy_from_bytes(bytes, name);
    EXPECT_EQ(npy_to_bytes(t), bytes);
    ++checked;
  }
  EXPECT_EQ(checked, 14 * 6);  // 14 dtypes x 6 shapes
}

TEST(Npy, ReadsShapesAndValues) {
  const Tensor scalar = npy_from_bytes(member("float64_scalar.npy"));
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.numel(), 1);
  const Tensor vec = npy_from_bytes(member("int16_vec.npy"));
  EXPECT_EQ(vec.shape(), (Shape{5}));
  EXPECT_EQ(vec.dtype(), DType::kInt16);
  const Tensor empty = npy_from_bytes(member("uint8_empty.npy"));
  EXPECT_EQ(empty.shape(), (Shape{0, 4}));
  EXPECT_EQ(empty.numel(), 0);
  const Tensor c = npy_from_bytes(member("complex64_mat.npy"));
  EXPECT_EQ(c.dtype(), DType::kComplex64);
  const Tensor b = npy_from_bytes(member("bool_mat.npy"));
  EXPECT_EQ(b.dtype(), DType::kBool);
  const Tensor wide = npy_from_bytes(member("float16_wide.npy"));
  EXPECT_EQ(wide.rank(), 30);
  const Tensor huge = npy_from_bytes(member("int8_long.npy"));
  EXPECT_EQ(huge.shape(), (Shape{1234567890123, 0}));
}

TEST(Npy, FortranOrderIsTransposedToCOrder) {
  const Tensor f = npy_from_bytes(member("fortran_int32_2x3x4.npy"));
  const Tensor c = npy_from_bytes(member("fortran_int32_2x3x4_c.npy"));
  EXPECT_TRUE(f.bit_equal(c));
  EXPECT_EQ(f.to_vector<int32_t>()[5], 5);
}

TEST(Npy, ReadsVersion2And3Headers) {
  for (const char* name : {"v2_float32_2x3.npy", "v3_float32_2x3.npy"}) {
    const Tensor t = npy_from_bytes(member(name), name);
    EXPECT_EQ(t.shape(), (Shape{2, 3}));
    EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  }
}

TEST(Npy, HeaderParsingIsRobust) {
  // Keys in another order, double quotes, Python 2 long suffixes, no trailing comma.
  std::string header = "{\"shape\": (2L, 1), \"fortran_order\": False, \"descr\": \"<i2\"}\n";
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size());
  bytes += '\0';
  bytes += header;
  bytes += std::string("\x07\x00\xf9\xff", 4);
  const Tensor t = npy_from_bytes(bytes);
  EXPECT_EQ(t.to_vector<int16_t>(), (std::vector<int16_t>{7, -7}));
}

TEST(Npy, RejectsBadData) {
  auto error_of = [](const std::string& bytes) -> std::string {
    try {
      npy_from_bytes(bytes, "x.npy");
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string good = member("float32_mat.npy");
  EXPECT_NE(error_of(good.substr(0, good.size() - 1)).find("truncated .npy data"), std::string::npos);
  EXPECT_NE(error_of(good.substr(0, 40)).find("truncated .npy file"), std::string::npos);
  EXPECT_NE(error_of(good.substr(0, 9)).find("truncated"), std::string::npos);
  EXPECT_NE(error_of("hello world").find("not a .npy file"), std::string::npos);
  EXPECT_NE(error_of("").find("not a .npy file"), std::string::npos);
  std::string broken = good;
  broken[20] = '#';
  EXPECT_NE(error_of(broken).find("malformed .npy header"), std::string::npos);
  EXPECT_NE(error_of(member("big_endian_f4.npy")).find("big-endian"), std::string::npos);
  EXPECT_NE(error_of(member("unicode.npy")).find("'<U2' is not supported"), std::string::npos);
  EXPECT_EQ(npy_from_bytes(member("big_endian_i1.npy")).to_vector<int8_t>(), (std::vector<int8_t>{0, 1, 2}));
}

TEST(Npy, RefusesBFloat16) {
  const Tensor t = Tensor::from_vector<BFloat16>({1}, {BFloat16(1.0f)});
  try {
    npy_to_bytes(t);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("bfloat16"), std::string::npos);
  }
}

TEST(Npy, FileRoundTrip) {
  testing::TempDir dir;
  const Tensor t = Tensor::from_vector<double>({2, 2}, {1.5, -2, 3, 1e300});
  write_npy((dir / "a.npy").string(), t);
  EXPECT_TRUE(read_npy((dir / "a.npy").string()).bit_equal(t));
}

}  // namespace
}  // namespace parity
