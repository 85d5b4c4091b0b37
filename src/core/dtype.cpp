#include "core/dtype.h"

#include <algorithm>
#include <cctype>

#include "core/low_precision.h"
#include "core/status.h"

namespace parity {

namespace {
struct DTypeInfo {
  DType dtype;
  std::string_view name;
  size_t size;
  const char* descr;  // numpy descr, nullptr when numpy has none
};

constexpr DTypeInfo kDTypeTable[] = {
    {DType::kFloat32, "float32", 4, "<f4"},     {DType::kUInt8, "uint8", 1, "|u1"},
    {DType::kInt8, "int8", 1, "|i1"},           {DType::kUInt16, "uint16", 2, "<u2"},
    {DType::kInt16, "int16", 2, "<i2"},         {DType::kInt32, "int32", 4, "<i4"},
    {DType::kInt64, "int64", 8, "<i8"},         {DType::kString, "string", sizeof(std::string), nullptr},
    {DType::kBool, "bool", 1, "|b1"},           {DType::kFloat16, "float16", 2, "<f2"},
    {DType::kFloat64, "float64", 8, "<f8"},     {DType::kUInt32, "uint32", 4, "<u4"},
    {DType::kUInt64, "uint64", 8, "<u8"},       {DType::kComplex64, "complex64", 8, "<c8"},
    {DType::kComplex128, "complex128", 16, "<c16"}, {DType::kBFloat16, "bfloat16", 2, "<V2"},
    // One byte per element in memory (see core/low_precision.h). The descrs are what numpy.save
    // records for ml_dtypes' types: kind 'V' with native byte order for all but float8_e5m2,
    // which ml_dtypes registers with kind 'f'.
    {kFloat8E4M3FN, "float8e4m3fn", 1, "<V1"},   {kFloat8E4M3FNUZ, "float8e4m3fnuz", 1, "<V1"},
    {kFloat8E5M2, "float8e5m2", 1, "<f1"},       {kFloat8E5M2FNUZ, "float8e5m2fnuz", 1, "<V1"},
    {kUInt4, "uint4", 1, "<V1"},                 {kInt4, "int4", 1, "<V1"},
    {kFloat4E2M1, "float4e2m1", 1, "<V1"},       {kFloat8E8M0, "float8e8m0", 1, "<V1"},
    {kUInt2, "uint2", 1, "<V1"},                 {kInt2, "int2", 1, "<V1"},
    {kNumpyVoid1, "V1", 1, "|V1"},
};

const DTypeInfo* find_info(DType dtype) {
  for (const auto& info : kDTypeTable)
    if (info.dtype == dtype) return &info;
  return nullptr;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}
}  // namespace

std::string_view dtype_name(DType dtype) {
  const auto* info = find_info(dtype);
  return info ? info->name : std::string_view("undefined");
}

std::optional<DType> dtype_from_name(std::string_view name) {
  const std::string n = lower(name);
  for (const auto& info : kDTypeTable)
    if (info.name == n) return info.dtype;
  struct Alias {
    const char* alias;
    DType dtype;
  };
  static constexpr Alias kAliases[] = {
      {"float", DType::kFloat32},   {"fp32", DType::kFloat32}, {"f32", DType::kFloat32},
      {"half", DType::kFloat16},    {"fp16", DType::kFloat16}, {"f16", DType::kFloat16},
      {"double", DType::kFloat64},  {"fp64", DType::kFloat64}, {"f64", DType::kFloat64},
      {"bf16", DType::kBFloat16},   {"int", DType::kInt32},    {"long", DType::kInt64},
      {"bool_", DType::kBool},      {"str", DType::kString},   {"object", DType::kString},
      // ml_dtypes' names for the low-precision types.
      {"float8_e4m3fn", kFloat8E4M3FN}, {"float8_e4m3fnuz", kFloat8E4M3FNUZ},
      {"float8_e5m2", kFloat8E5M2},     {"float8_e5m2fnuz", kFloat8E5M2FNUZ},
      {"float8_e8m0fnu", kFloat8E8M0},  {"float4_e2m1fn", kFloat4E2M1},
  };
  for (const auto& a : kAliases)
    if (n == a.alias) return a.dtype;
  return std::nullopt;
}

size_t dtype_size(DType dtype) {
  const auto* info = find_info(dtype);
  return info ? info->size : 0;
}

bool is_floating(DType d) {
  return d == DType::kFloat32 || d == DType::kFloat64 || d == DType::kFloat16 || d == DType::kBFloat16;
}
bool is_signed_integer(DType d) {
  return d == DType::kInt8 || d == DType::kInt16 || d == DType::kInt32 || d == DType::kInt64;
}
bool is_unsigned_integer(DType d) {
  return d == DType::kUInt8 || d == DType::kUInt16 || d == DType::kUInt32 || d == DType::kUInt64;
}
bool is_integer(DType d) { return is_signed_integer(d) || is_unsigned_integer(d); }
bool is_complex(DType d) { return d == DType::kComplex64 || d == DType::kComplex128; }
bool is_valid_dtype(DType d) { return find_info(d) != nullptr; }

std::optional<std::string> numpy_descr(DType dtype) {
  const auto* info = find_info(dtype);
  if (!info || !info->descr) return std::nullopt;
  return std::string(info->descr);
}

std::optional<DType> dtype_from_numpy_descr(std::string_view descr) {
  if (descr.size() < 2) return std::nullopt;
  char order = descr[0];
  std::string_view rest = descr.substr(1);
  if (order != '<' && order != '|' && order != '=' && order != '>') {
    order = '=';
    rest = descr;
  }
  if (rest.empty()) return std::nullopt;
  // Big-endian multi-byte data is not supported (parity stores little-endian only).
  const char kind = rest[0];
  const std::string_view width = rest.substr(1);
  const bool multi_byte = !(width == "1");
  if (order == '>' && multi_byte) return std::nullopt;
  struct Entry {
    char kind;
    std::string_view width;
    DType dtype;
  };
  static constexpr Entry kEntries[] = {
      {'f', "2", DType::kFloat16}, {'f', "4", DType::kFloat32}, {'f', "8", DType::kFloat64},
      {'i', "1", DType::kInt8},    {'i', "2", DType::kInt16},   {'i', "4", DType::kInt32},
      {'i', "8", DType::kInt64},   {'u', "1", DType::kUInt8},   {'u', "2", DType::kUInt16},
      {'u', "4", DType::kUInt32},  {'u', "8", DType::kUInt64},  {'b', "1", DType::kBool},
      {'c', "8", DType::kComplex64}, {'c', "16", DType::kComplex128},
      // ml_dtypes' types as numpy.save records them: float8_e5m2 has kind 'f'; bfloat16 is the
      // only 2-byte type of kind 'V'; the 1-byte 'V' types cannot be told apart (kNumpyVoid1).
      {'f', "1", kFloat8E5M2},     {'V', "2", DType::kBFloat16}, {'V', "1", kNumpyVoid1},
  };
  for (const auto& e : kEntries)
    if (e.kind == kind && e.width == width) return e.dtype;
  return std::nullopt;
}

void throw_unsupported_dtype(DType dtype, const char* where) {
  fail(ErrorCode::kUnsupported, "dtype ", dtype_name(dtype), " is not supported in ", where);
}

}  // namespace parity
