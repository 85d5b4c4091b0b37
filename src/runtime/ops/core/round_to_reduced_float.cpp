// Spec: none (parity's own "ai.parity" domain; the rounding is Cast's to float16 / bfloat16)
// RoundToReducedFloat(to): the input's values rounded to float16 (to = 10) or bfloat16 (to = 16)
// as Cast rounds them (nearest even; beyond float16's range to +-inf; NaN stays NaN), handed out
// as float32. The reduced-float lowering (runtime/rewrites/reduced_float_lowering.h) puts it where
// a float16 or bfloat16 model casts a wider value to its narrow type: the model's rounding
// happens, while the value stays in the type the optimized kernels compute in. Inputs that are not
// float32 (integers, bool, double) are converted to float32 first.
#include <algorithm>
#include <cstring>

#include "runtime/kernel.h"
#include "runtime/reduced_precision.h"

namespace parity::runtime {
namespace {

class RoundToReducedFloat : public Kernel {
 public:
  explicit RoundToReducedFloat(const KernelInit& init) : to_(static_cast<DType>(init.attr_int("to"))) {
    if (to_ != DType::kFloat16 && to_ != DType::kBFloat16)
      init.fail("attribute 'to' must be FLOAT16 (10) or BFLOAT16 (16), got ", static_cast<int>(to_));
  }

  void compute(KernelContext& ctx) const override {
    const Tensor& in = ctx.input(0);
    if (!is_floating(in.dtype()) && !is_integer(in.dtype()) && in.dtype() != DType::kBool)
      ctx.fail("input must be a floating-point, integer or bool tensor, got ", dtype_name(in.dtype()));
    const Tensor source = in.dtype() == DType::kFloat32 ? in : in.cast(DType::kFloat32);
    Tensor& out = ctx.allocate_output_uninitialized(0, DType::kFloat32, source.shape());
    const float* src = source.data<float>();
    float* dst = out.data<float>();
    // Chunks small enough to stay in cache between the copy and the rounding.
    constexpr int64_t kChunk = 16384;
    const int64_t n = source.numel();
    ctx.parallel_for((n + kChunk - 1) / kChunk, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const int64_t first = c * kChunk, count = std::min(kChunk, n - first);
        std::memcpy(dst + first, src + first, static_cast<size_t>(count) * sizeof(float));
        round_floats_to(to_, dst + first, count);
      }
    });
  }

 private:
  DType to_;
};

}  // namespace

PARITY_REGISTER_KERNEL("ai.parity", "RoundToReducedFloat", 1, RoundToReducedFloat);

}  // namespace parity::runtime
