// Spec: https://onnx.ai/onnx/operators/onnx__Add.html, onnx__Sub.html, onnx__Mul.html,
//       onnx__Div.html, onnx__Mod.html, onnx__BitShift.html, onnx__Pow.html
// Element-wise binary arithmetic with numpy broadcasting: Add, Sub, Mul, Div, Mod, Pow, BitShift.
//
// Integers wrap around like numpy; integer Div truncates toward zero (as the ONNX reference's
// true-divide-then-cast does); division by zero on integers yields 0 instead of trapping.
#include <cmath>
#include <limits>
#include <type_traits>

#include "runtime/ops/common/binary_kernel.h"

namespace parity::runtime::ops {
namespace {

template <typename T>
constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

struct AddOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = NumericTypes;
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (kIsInt<T>) return wrap_add(a, b);
    else return from_compute<T>(to_compute(a) + to_compute(b));
  }
};

struct SubOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = NumericTypes;
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (kIsInt<T>) return wrap_sub(a, b);
    else return from_compute<T>(to_compute(a) - to_compute(b));
  }
};

struct MulOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = NumericTypes;
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (kIsInt<T>) return wrap_mul(a, b);
    else return from_compute<T>(to_compute(a) * to_compute(b));
  }
};

template <typename T>
T int_div(T a, T b) {
  if (b == 0) return T(0);
  if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::min() && b == T(-1)) return a;  // wraps, like numpy
  }
  return static_cast<T>(a / b);
}

struct DivOp : NoAttrs {
  using NoAttrs::NoAttrs;
  using Types = NumericTypes;
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (kIsInt<T>) return int_div(a, b);
    else return from_compute<T>(to_compute(a) / to_compute(b));
  }
};

/// Remainder with the sign of the dividend (C fmod / %), as Mod with fmod=1.
template <typename T>
T truncated_mod(T a, T b) {
  if constexpr (kIsInt<T>) {
    if (b == 0) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(0);  // avoids INT_MIN % -1 overflow
    }
    return static_cast<T>(a % b);
  } else {
    return from_compute<T>(std::fmod(to_compute(a), to_compute(b)));
  }
}

struct ModOp {
  using Types = NumericTypes;
  explicit ModOp(const KernelInit& init) : fmod(init.attr_int("fmod", 0) != 0) {}
  template <typename T>
  T operator()(T a, T b) const {
    const T r = truncated_mod(a, b);
    if (fmod) return r;
    // Python/numpy modulo: the result takes the divisor's sign.
    if constexpr (kIsInt<T>) {
      if constexpr (std::is_signed_v<T>) {
        if (r != 0 && ((r < 0) != (b < 0))) return static_cast<T>(r + b);
      }
      return r;
    } else {
      const auto cr = to_compute(r), cb = to_compute(b);
      if (cr != 0 && ((cr < 0) != (cb < 0))) return from_compute<T>(cr + cb);
      return r;
    }
  }
  bool fmod;
};

/// https://onnx.ai/onnx/operators/onnx__BitShift.html: unsigned integers since opset 11, every
/// integer type since 28. A shift amount that is negative or at least the bit width shifts every
/// bit out (0, or -1 for a negative value shifted right); left shifts wrap; right shifts of signed
/// values are arithmetic.
struct BitShiftOp {
  using Types = IntTypes;
  explicit BitShiftOp(const KernelInit& init) {
    const std::string direction = init.attr_string("direction");
    if (direction != "LEFT" && direction != "RIGHT")
      init.fail("attribute 'direction' must be LEFT or RIGHT, got '", direction, "'");
    left = direction == "LEFT";
  }
  template <typename T>
  T operator()(T a, T b) const {
    if constexpr (kIsInt<T>) {
      using U = std::make_unsigned_t<T>;
      constexpr U kBits = sizeof(T) * 8;
      bool all_out = static_cast<U>(b) >= kBits;  // shifting that far is undefined in C++
      if constexpr (std::is_signed_v<T>) all_out = all_out || b < 0;
      if (left) return all_out ? T(0) : static_cast<T>(static_cast<U>(static_cast<U>(a) << static_cast<U>(b)));
      if (!all_out) return static_cast<T>(a >> b);  // arithmetic for signed T (C++20)
      if constexpr (std::is_signed_v<T>) return a < 0 ? T(-1) : T(0);
      return T(0);
    } else {
      return a;
    }
  }
  bool left;
};

// --- Pow: base and exponent may have different types since opset 12 -------------------------
using PowBaseTypes = TypeList<float, double, Float16, BFloat16, int32_t, int64_t>;

template <typename T, typename E>
T power(T base, E exponent) {
  if constexpr (kIsInt<T> && kIsInt<E>) {
    if constexpr (std::is_signed_v<E>) {
      if (exponent < 0) {  // only |base| == 1 has an integer result
        if (base == T(1)) return T(1);
        if (base == T(-1)) return (exponent % 2 == 0) ? T(1) : T(-1);
        return T(0);
      }
    }
    T result = 1, b = base;
    auto e = static_cast<uint64_t>(exponent);
    while (e) {
      if (e & 1u) result = wrap_mul(result, b);
      b = wrap_mul(b, b);
      e >>= 1;
    }
    return result;
  } else {
    const double r = std::pow(static_cast<double>(to_compute(base)), static_cast<double>(to_compute(exponent)));
    return convert_scalar<T>(r);
  }
}

class PowKernel final : public Kernel {
 public:
  explicit PowKernel(const KernelInit& init) : legacy_(init) {}
  void compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor y = legacy_.align(ctx, x, ctx.input(1));
    dispatch_dtype<PowBaseTypes>(x.dtype(), ctx, [&](auto base_tag) {
      using T = typename decltype(base_tag)::type;
      dispatch_dtype<NumericTypes>(y.dtype(), ctx, [&](auto exp_tag) {
        using E = typename decltype(exp_tag)::type;
        broadcast_binary<T, E, T>(ctx, x, y, [](T a, E b) { return power(a, b); });
      });
    });
  }

 private:
  LegacyBroadcast legacy_;
};

}  // namespace

PARITY_REGISTER_KERNEL("", "Add", (1, 6, 7, 13, 14), BinaryKernel<AddOp>);
PARITY_REGISTER_KERNEL("", "Sub", (1, 6, 7, 13, 14), BinaryKernel<SubOp>);
PARITY_REGISTER_KERNEL("", "Mul", (1, 6, 7, 13, 14), BinaryKernel<MulOp>);
PARITY_REGISTER_KERNEL("", "Div", (1, 6, 7, 13, 14), BinaryKernel<DivOp>);
PARITY_REGISTER_KERNEL("", "Mod", (10, 13), BinaryKernel<ModOp>);
PARITY_REGISTER_KERNEL("", "BitShift", (11, 28), BinaryKernel<BitShiftOp>);
PARITY_REGISTER_KERNEL("", "Pow", (1, 7, 12, 13, 15), PowKernel);

}  // namespace parity::runtime::ops
