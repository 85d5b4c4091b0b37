// Cast and CastLike: https://onnx.ai/onnx/operators/onnx__Cast.html,
// https://onnx.ai/onnx/operators/onnx__CastLike.html
//
// fp64 oracle: a cast to any floating dtype produces float64 (compute_dtype), so the oracle never
// rounds to float16/float32 in the middle of a graph; casts to integers, bool and string behave as
// in fp32 mode.
#include <charconv>
#include <cmath>
#include <cstdlib>

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

Tensor cast_tensor(const Tensor& in, DType to, KernelContext& ctx) {
  if (in.dtype() == to) return in;
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
  if (to == DType::kBFloat16 && in.dtype() != DType::kFloat16) {
    // ONNX 1.12 (the opset parity targets) defines float -> bfloat16 by truncating the low 16 bits,
    // as its reference implementation and test data do.
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
  explicit Cast(const KernelInit& init) {
    const Attribute* attr = init.find_attr("to");
    DType to = DType::kUndefined;
    if (attr && attr->type == AttrType::kString) {
      // Cast-1 names the type ("FLOAT"); later versions use the TensorProto enum value.
      static const char* kNames[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING",
                                     "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
      for (int i = 1; i < 17; ++i)
        if (attr->s == kNames[i]) to = static_cast<DType>(i);
      if (to == DType::kUndefined) init.fail("attribute 'to' names unknown data type '", attr->s, "'");
    } else {
      to = static_cast<DType>(init.attr_int("to"));
    }
    if (!is_valid_dtype(to)) init.fail("attribute 'to' names unknown data type ", static_cast<int>(to));
    to_ = compute_dtype(to, init.precision());
  }
  void compute(KernelContext& ctx) const override { ctx.set_output(0, Value(cast_tensor(ctx.input(0), to_, ctx))); }

 private:
  DType to_;
};

class CastLike : public Kernel {
 public:
  explicit CastLike(const KernelInit&) {}
  void compute(KernelContext& ctx) const override {
    const DType to = compute_dtype(ctx.input(1).dtype(), ctx.precision());
    ctx.set_output(0, Value(cast_tensor(ctx.input(0), to, ctx)));
  }
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Cast", 1, Cast);
PARITY_REGISTER_KERNEL("", "Cast", 6, Cast);
PARITY_REGISTER_KERNEL("", "Cast", 9, Cast);
PARITY_REGISTER_KERNEL("", "Cast", 13, Cast);
PARITY_REGISTER_KERNEL("", "CastLike", 15, CastLike);

}  // namespace parity::runtime
