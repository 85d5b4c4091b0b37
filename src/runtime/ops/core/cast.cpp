// Spec: https://onnx.ai/onnx/operators/onnx__Cast.html, onnx__CastLike.html, onnx__BitCast.html
// Cast and CastLike; BitCast (opset 26).
//
// fp64 oracle: a cast to any floating dtype produces float64 (compute_dtype), so the oracle never
// rounds to float16/float32 in the middle of a graph; casts to integers, bool and string behave as
// in fp32 mode.
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "core/low_precision.h"
#include "runtime/kernel.h"

namespace parity::runtime {
namespace {

std::string float_to_string(double v, bool single) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "INF" : "-INF";
  char buf[64];
  auto res = single ? std::to_chars(buf, buf + sizeof(buf), static_cast<float>(v))
                    : std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, res.ptr);
}

double string_to_double(const std::string& s, KernelContext& ctx) {
  std::string lower;
  for (char c : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "nan") return NAN;
  if (lower == "inf" || lower == "+inf" || lower == "infinity") return INFINITY;
  if (lower == "-inf" || lower == "-infinity") return -INFINITY;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size()) ctx.fail("cannot convert string '", s, "' to a number");
  return v;
}

/// How float -> bfloat16 rounds: models before opset 19 follow ONNX 1.12's reference and test
/// data, which truncate the low 16 bits; from Cast-19 on (and ONNX 1.23's test data) the
/// conversion rounds to nearest even, as parity's BFloat16 does.
enum class BFloat16Rounding { kTruncate, kNearestEven };

BFloat16Rounding bfloat16_rounding(const KernelInit& init) {
  return init.opset() < 19 ? BFloat16Rounding::kTruncate : BFloat16Rounding::kNearestEven;
}

/// Cast-19+'s saturate (float8/float4 targets) and Cast-24+'s round_mode (float8e8m0 targets).
struct LowPrecisionOptions {
  bool saturate = true;
  RoundMode round = RoundMode::kUp;
  BFloat16Rounding bf16_rounding = BFloat16Rounding::kNearestEven;
};

LowPrecisionOptions cast_options(const KernelInit& init) {
  LowPrecisionOptions o;
  o.saturate = init.attr_int("saturate", 1) != 0;
  const std::string mode = init.attr_string("round_mode", "up");
  if (mode == "up") o.round = RoundMode::kUp;
  else if (mode == "down") o.round = RoundMode::kDown;
  else if (mode == "nearest") o.round = RoundMode::kNearestEven;
  else init.fail("attribute 'round_mode' must be 'up', 'down' or 'nearest', got '", mode, "'");
  o.bf16_rounding = bfloat16_rounding(init);
  return o;
}

Tensor cast_tensor(const Tensor& in, DType to, KernelContext& ctx, const LowPrecisionOptions& options) {
  if (in.dtype() == to) return in;
  if (is_low_precision(to) || is_low_precision(in.dtype())) {
    if (to == DType::kString || in.dtype() == DType::kString)
      ctx.fail("casting between string and ", dtype_name(to == DType::kString ? in.dtype() : to), " is not supported");
    return cast_low_precision(in, to, options.saturate, options.round);
  }
  const BFloat16Rounding bf16_rounding = options.bf16_rounding;
  if (to == DType::kString) {
    Tensor out(DType::kString, in.shape());
    auto dst = out.values<std::string>();
    visit_numeric_dtype(in.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* src = in.data<T>();
      for (int64_t i = 0; i < in.numel(); ++i) {
        if constexpr (std::is_same_v<T, bool>) dst[i] = src[i] ? "1" : "0";
        else if constexpr (std::is_integral_v<T>) dst[i] = std::to_string(src[i]);
        else {
          // A double that is exactly a float32 prints as that float32: in the fp64 oracle a float
          // model's values are doubles, and must still print like the model's floats.
          const double v = convert_scalar<double>(src[i]);
          const bool single = !std::is_same_v<T, double> || static_cast<double>(static_cast<float>(v)) == v;
          dst[i] = float_to_string(v, single);
        }
      }
    });
    return out;
  }
  if (in.dtype() == DType::kString) {
    Tensor out(to, in.shape());
    const auto src = in.values<std::string>();
    visit_numeric_dtype(to, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* dst = out.data<T>();
      for (int64_t i = 0; i < in.numel(); ++i) {
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          dst[i] = static_cast<T>(std::strtoll(src[i].c_str(), nullptr, 10));
        } else {
          dst[i] = convert_scalar<T>(string_to_double(src[i], ctx));
        }
      }
    });
    return out;
  }
  if (to == DType::kBFloat16 && in.dtype() != DType::kFloat16 && bf16_rounding == BFloat16Rounding::kTruncate) {
    const Tensor f = in.dtype() == DType::kFloat32 ? in : in.cast(DType::kFloat32);
    Tensor out(DType::kBFloat16, in.shape());
    const auto* src = static_cast<const uint32_t*>(f.raw_data());
    auto* dst = static_cast<uint16_t*>(out.raw_data());
    for (int64_t i = 0; i < in.numel(); ++i) dst[i] = static_cast<uint16_t>(src[i] >> 16);
    return out;
  }
  return in.cast(to);
}

class Cast : public Kernel {
 public:
  explicit Cast(const KernelInit& init) : options_(cast_options(init)) {
    const model::Attribute* attr = init.find_attr("to");
    DType to = DType::kUndefined;
    if (attr && attr->type == model::AttrType::kString) {
      // Cast-1 names the type ("FLOAT"); later versions use the TensorProto enum value.
      static const char* kNames[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING",
                                     "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
      // Cast-1 predates every type after BFLOAT16, so its names stop there.
      for (int i = 1; i < 17; ++i)
        if (attr->s == kNames[i]) to = static_cast<DType>(i);
      if (to == DType::kUndefined) init.fail("attribute 'to' names unknown data type '", attr->s, "'");
    } else {
      to = static_cast<DType>(init.attr_int("to"));
    }
    if (!is_valid_dtype(to)) init.fail("attribute 'to' names unknown data type ", static_cast<int>(to));
    to_ = compute_dtype(to, init.precision());
  }
  void compute(KernelContext& ctx) const override {
    ctx.set_output(0, Value(cast_tensor(ctx.input(0), to_, ctx, options_)));
  }

 private:
  DType to_;
  LowPrecisionOptions options_;
};

class CastLike : public Kernel {
 public:
  explicit CastLike(const KernelInit& init) : options_(cast_options(init)) {}
  void compute(KernelContext& ctx) const override {
    const DType to = compute_dtype(ctx.input(1).dtype(), ctx.precision());
    ctx.set_output(0, Value(cast_tensor(ctx.input(0), to, ctx, options_)));
  }

 private:
  LowPrecisionOptions options_;
};

/// Reinterprets each element's bytes as another type of the same size. In the fp64 oracle a
/// floating input arrives as float64, so it is first rounded back to the model's declared type:
/// the bit pattern is the model's, not the oracle's.
class BitCast : public Kernel {
 public:
  explicit BitCast(const KernelInit& init)
      : to_(static_cast<DType>(init.attr_int("to"))), declared_(init.input_dtype(0)) {
    if (!is_valid_dtype(to_) || to_ == DType::kString || to_ == DType::kUndefined)
      init.fail("attribute 'to' names a type BitCast cannot produce: ", static_cast<int>(to_));
    // parity holds 4-bit and 2-bit elements one per byte, so their bytes are not ONNX's bit pattern.
    if (is_sub_byte(to_) || is_sub_byte(declared_))
      init.fail("BitCast of packed ", dtype_name(is_sub_byte(to_) ? to_ : declared_), " elements is not supported");
  }
  void compute(KernelContext& ctx) const override {
    Tensor in = ctx.input(0);
    if (in.dtype() == DType::kString) ctx.fail("string tensors have no fixed-size bit pattern");
    if (declared_ != DType::kUndefined && declared_ != in.dtype() && is_floating(declared_)) in = in.cast(declared_);
    if (dtype_size(in.dtype()) != dtype_size(to_))
      ctx.fail("cannot reinterpret ", dtype_name(in.dtype()), " (", dtype_size(in.dtype()), " bytes) as ",
               dtype_name(to_), " (", dtype_size(to_), " bytes)");
    if (to_ == DType::kBool) {
      // A C++ bool must hold 0 or 1; any other byte has no bool meaning.
      const auto* bytes = static_cast<const uint8_t*>(in.raw_data());
      for (size_t i = 0; i < in.size_bytes(); ++i)
        if (bytes[i] > 1) ctx.fail("byte value ", static_cast<int>(bytes[i]), " at element ", i, " is not a bool");
    }
    Tensor out = Tensor::from_bytes(to_, in.shape(), in.raw_data(), in.size_bytes());
    // In the fp64 oracle a floating result is held as float64 like every other floating tensor.
    if (ctx.precision() == Precision::kFloat64 && is_floating(to_)) out = out.cast(DType::kFloat64);
    ctx.set_output(0, Value(std::move(out)));
  }

 private:
  DType to_;
  DType declared_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Cast", (1, 6, 9, 13), Cast);
PARITY_REGISTER_KERNEL("", "CastLike", 15, CastLike);
PARITY_REGISTER_KERNEL("", "BitCast", 26, BitCast);

}  // namespace parity::runtime
