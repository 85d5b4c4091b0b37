#include "core/formats/npy.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/formats/npz.h"
#include "core/low_precision.h"
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

// What numpy.save writes for ml_dtypes' types (scripts/make_format_fixtures.py): every bit pattern
// of each 1-byte type, one element per byte as ml_dtypes holds it.
std::string ml_dtypes_member(const std::string& name) {
  const auto path = source_dir() / "tests/data/formats/ml_dtypes.zip";
  for (auto& [n, data] : zip_members_from_bytes(read_file(path), path.string()))
    if (n == name) return data;
  ADD_FAILURE() << "no fixture member " << name;
  return {};
}

TEST(Npy, MlDtypesOneByteTypesReadAsVoidAndWriteBackByteForByte) {
  struct Case {
    const char* file;
    DType dtype;
    uint8_t pattern;  // one element's byte as ml_dtypes holds it
    double value;     // what that element is
  };
  const Case cases[] = {
      {"float8_e4m3fn.npy", kFloat8E4M3FN, 0x38, 1.0},    {"float8_e4m3fnuz.npy", kFloat8E4M3FNUZ, 0x40, 1.0},
      {"float8_e5m2.npy", kFloat8E5M2, 0xC0, -2.0},        {"float8_e5m2fnuz.npy", kFloat8E5M2FNUZ, 0x44, 2.0},
      {"float8_e8m0fnu.npy", kFloat8E8M0, 0x7F, 1.0},      {"float4_e2m1fn.npy", kFloat4E2M1, 0x0F, -6.0},
      {"int4.npy", kInt4, 0x0F, -1.0},                     {"uint4.npy", kUInt4, 0x0F, 15.0},
      {"int2.npy", kInt2, 0x02, -2.0},                     {"uint2.npy", kUInt2, 0x03, 3.0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    const std::string bytes = ml_dtypes_member(c.file);
    const Tensor read = npy_from_bytes(bytes, c.file);
    // Only float8_e5m2 names its type ('<f1'); the others are numpy's untyped '<V1' bytes.
    EXPECT_EQ(read.dtype(), c.dtype == kFloat8E5M2 ? kFloat8E5M2 : kNumpyVoid1);
    const int64_t patterns = int64_t{1} << dtype_bits(c.dtype);
    EXPECT_EQ(read.shape(), (Shape{patterns / 4, 4}));
    const Tensor typed = resolve_numpy_void(read, c.dtype);
    ASSERT_EQ(typed.dtype(), c.dtype);
    EXPECT_EQ(typed.value_as_double(c.pattern), c.value);
    EXPECT_EQ(npy_to_bytes(typed), bytes);
    if (read.dtype() == kNumpyVoid1) EXPECT_EQ(npy_to_bytes(read), bytes.substr(0, 20) + "'|V1'" + bytes.substr(25));
  }
}

TEST(Npy, SubByteUpperBitsAreIgnoredOnReadAndZeroOnWrite) {
  // ml_dtypes ignores the upper bits of an int4/int2 byte and writes them as zero; parity holds
  // int4/int2 sign-extended.
  const Tensor raw = Tensor::from_vector<uint8_t>({3}, {0xF7, 0x0F, 0x38});
  const Tensor as_void = Tensor::from_bytes(kNumpyVoid1, {3}, raw.raw_data(), 3);
  const Tensor i4 = resolve_numpy_void(as_void, kInt4);
  EXPECT_EQ(i4.value_as_double(0), 7.0);
  EXPECT_EQ(i4.value_as_double(1), -1.0);
  EXPECT_EQ(i4.value_as_double(2), -8.0);
  EXPECT_EQ(static_cast<const uint8_t*>(i4.raw_data())[1], 0xFF);
  const std::string bytes = npy_to_bytes(i4);
  EXPECT_EQ(bytes.substr(bytes.size() - 3), std::string("\x07\x0f\x08", 3));
  EXPECT_EQ(resolve_numpy_void(as_void, kUInt2).value_as_double(0), 3.0);
  // Not a 1-byte low-precision type: left as it is.
  EXPECT_EQ(resolve_numpy_void(as_void, DType::kUInt8).dtype(), kNumpyVoid1);
}

TEST(Npy, BFloat16IsMlDtypesV2) {
  const std::string bytes = ml_dtypes_member("bfloat16.npy");
  const Tensor t = npy_from_bytes(bytes, "bfloat16.npy");
  ASSERT_EQ(t.dtype(), DType::kBFloat16);
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.value_as_double(1), 1.0);
  EXPECT_EQ(t.value_as_double(2), -3.0);
  EXPECT_TRUE(std::isinf(t.value_as_double(3)));
  EXPECT_TRUE(std::isnan(t.value_as_double(4)));
  EXPECT_EQ(npy_to_bytes(t), bytes);
}

TEST(Npy, FileRoundTrip) {
  testing::TempDir dir;
  const Tensor t = Tensor::from_vector<double>({2, 2}, {1.5, -2, 3, 1e300});
  write_npy((dir / "a.npy").string(), t);
  EXPECT_TRUE(read_npy((dir / "a.npy").string()).bit_equal(t));
}

}  // namespace
}  // namespace parity
