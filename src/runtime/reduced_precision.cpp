// Reduced-precision layers (reduced_precision.h): layer selection, operand rounding and
// quantization, and the wrapper kernel.
#include "runtime/reduced_precision.h"
#include "runtime/reduced_precision_facts.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <set>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include "core/float16.h"
#include "core/text.h"
#include "runtime/buffer_pool.h"
#include "runtime/channels_last.h"
#if PARITY_HAVE_DNNL
#include "runtime/dnnl/dnnl_support.h"
#include "runtime/dnnl/int8_inputs.h"
#endif
#include "runtime/kernel_preferences.h"
#include "runtime/packed_state.h"
#include "runtime/positional_fusion.h"
#include "runtime/reduced_storage.h"
#include "runtime/subgraph.h"

namespace parity::runtime {

std::string precision_name(DType precision) {
  switch (precision) {
    case DType::kFloat16: return "fp16";
    case DType::kBFloat16: return "bf16";
    case DType::kInt8: return "int8";
    default: return "fp32";
  }
}

std::optional<DType> parse_precision(const std::string& text) {
  std::string t;
  for (char c : text) t.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (t == "fp32" || t == "float32" || t == "float") return DType::kFloat32;
  if (t == "fp16" || t == "float16" || t == "half") return DType::kFloat16;
  if (t == "bf16" || t == "bfloat16") return DType::kBFloat16;
  if (t == "int8") return DType::kInt8;
  return std::nullopt;
}

// --- rounding ---

namespace {

// The rounding loops read `src` and write `dst` (the same buffer when rounding in place), so a
// layer's rounded copy of an input costs one pass, not a copy and a pass.
void round_to_bfloat16(const float* src, float* dst, int64_t n) {
  const auto* in = reinterpret_cast<const uint32_t*>(src);
  auto* out = reinterpret_cast<uint32_t*>(dst);
  for (int64_t i = 0; i < n; ++i) {  // branch-free so that it vectorizes
    const uint32_t f = in[i];
    const bool nan = (f & 0x7fffffffu) > 0x7f800000u;
    const uint32_t rounded = (f + 0x7fffu + ((f >> 16) & 1u)) & 0xffff0000u;
    out[i] = nan ? ((f | 0x00400000u) & 0xffff0000u) : rounded;
  }
}

void round_to_float16_scalar(const float* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = detail::half_bits_to_float(detail::float_to_half_bits(src[i]));
}

#if defined(__x86_64__)
__attribute__((target("avx2,f16c"))) void round_to_float16_f16c(const float* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(src + i);
    const __m128i h = _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  round_to_float16_scalar(src + i, dst + i, n - i);
}

bool cpu_has_f16c() {
  static const bool has = [] {
    __builtin_cpu_init();
    // F16C from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports does not know "f16c".
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
    return __builtin_cpu_supports("avx2") && f16c;
  }();
  return has;
}
#endif

}  // namespace

namespace {

void round_floats_into(DType type, const float* src, float* dst, int64_t n) {
  if (type == DType::kBFloat16) {
    round_to_bfloat16(src, dst, n);
  } else if (type == DType::kFloat16) {
#if defined(__x86_64__)
    if (cpu_has_f16c()) {
      round_to_float16_f16c(src, dst, n);
      return;
    }
#endif
    round_to_float16_scalar(src, dst, n);
  } else if (src != dst) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
  }
}

}  // namespace

void round_floats_to(DType type, float* data, int64_t n) { round_floats_into(type, data, data, n); }

namespace {

// Quantization multiplies by the scale's reciprocal, as the requantizing epilogue of a layer that
// stores int8 values (oneDNN's linear post-op, runtime/reduced_storage.h) does: x / scale and
// x * (1 / scale) may differ in the last bit, and so round apart at a tie.
void fake_quantize_scalar(const float* src, float* dst, int64_t n, float scale) {
  const float inverse = 1.0f / scale;
  for (int64_t i = 0; i < n; ++i) {
    const float q = std::nearbyint(src[i] * inverse);
    dst[i] = std::clamp(q, -127.0f, 127.0f) * scale;
  }
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) void fake_quantize_avx2(const float* src, float* dst, int64_t n, float scale) {
  const __m256 s = _mm256_set1_ps(scale), inverse = _mm256_set1_ps(1.0f / scale), lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 q = _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(src + i), inverse), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    q = _mm256_min_ps(_mm256_max_ps(q, lo), hi);
    _mm256_storeu_ps(dst + i, _mm256_mul_ps(q, s));
  }
  fake_quantize_scalar(src + i, dst + i, n - i, scale);
}
#endif

}  // namespace

/// A scale so small that its reciprocal overflows (a channel of subnormal weights): x / scale,
/// which keeps zeros zero where x * inf would make them NaN.
static bool reciprocal_overflows(float scale) { return !std::isfinite(1.0f / scale); }

namespace {

/// fake_quantize_int8 from `src` into `dst` (the same buffer, or one of n floats): a layer's
/// quantized copy of an input costs one pass, not a copy and a pass.
void fake_quantize_into(const float* src, float* dst, int64_t n, float scale) {
  if (!(scale > 0) || !std::isfinite(scale)) {
    std::fill(dst, dst + n, 0.0f);
    return;
  }
  if (reciprocal_overflows(scale)) {
    for (int64_t i = 0; i < n; ++i) dst[i] = std::clamp(std::nearbyint(src[i] / scale), -127.0f, 127.0f) * scale;
    return;
  }
#if defined(__x86_64__)
  if (cpu_has_f16c()) {  // AVX2 and F16C: every CPU with one has had the other
    fake_quantize_avx2(src, dst, n, scale);
    return;
  }
#endif
  fake_quantize_scalar(src, dst, n, scale);
}

}  // namespace

void fake_quantize_int8(float* data, int64_t n, float scale) { fake_quantize_into(data, data, n, scale); }

namespace {

void quantize_scalar(const float* src, int8_t* dst, int64_t n, float scale) {
  const float inverse = 1.0f / scale;
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<int8_t>(std::clamp(std::nearbyint(src[i] * inverse), -127.0f, 127.0f));
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) void quantize_avx2(const float* src, int8_t* dst, int64_t n, float scale) {
  const __m256 inverse = _mm256_set1_ps(1.0f / scale), lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 q = _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(src + i), inverse), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    q = _mm256_min_ps(_mm256_max_ps(q, lo), hi);
    const __m256i v = _mm256_cvtps_epi32(q);  // exact: q is an integer in [-127, 127]
    // 8 int32 -> 8 int8: pack to int16 then int8 (saturating, values already in range).
    const __m128i lo16 = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    const __m128i bytes = _mm_packs_epi16(lo16, lo16);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + i), bytes);
  }
  quantize_scalar(src + i, dst + i, n - i, scale);
}
#endif

}  // namespace

void quantize_int8(const float* src, int8_t* dst, int64_t n, float scale) {
  if (!(scale > 0) || !std::isfinite(scale)) {
    std::fill(dst, dst + n, int8_t{0});
    return;
  }
  if (reciprocal_overflows(scale)) {
    for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<int8_t>(std::clamp(std::nearbyint(src[i] / scale), -127.0f, 127.0f));
    return;
  }
#if defined(__x86_64__)
  if (cpu_has_f16c()) {
    quantize_avx2(src, dst, n, scale);
    return;
  }
#endif
  quantize_scalar(src, dst, n, scale);
}

QuantizedWeights quantize_weights_int8(const Tensor& weights, int64_t axis) {
  PARITY_ASSERT(weights.dtype() == DType::kFloat32, "int8 weights are quantized from float32");
  QuantizedWeights q;
  q.values = Tensor(DType::kInt8, weights.shape());
  const float* data = weights.data<float>();
  int8_t* out = q.values.data<int8_t>();
  const int64_t n = weights.numel();
  if (axis < 0 || n == 0) {
    float amax = 0;
    for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(data[i]));
    q.scales = {amax / 127.0f};
    quantize_int8(data, out, n, q.scales[0]);
    return q;
  }
  // Element i belongs to channel (i / inner) % channels.
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < weights.rank(); ++d) inner *= weights.shape()[d];
  const int64_t channels = weights.shape()[axis], outer = n / (channels * inner);
  std::vector<float> amax(channels, 0.0f);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t k = 0; k < inner; ++k) amax[c] = std::max(amax[c], std::fabs(data[(o * channels + c) * inner + k]));
  q.scales.resize(channels);
  for (int64_t c = 0; c < channels; ++c) q.scales[c] = amax[c] / 127.0f;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c)
      quantize_int8(data + (o * channels + c) * inner, out + (o * channels + c) * inner, inner, q.scales[c]);
  return q;
}

// --- which layers ---

namespace {

/// Ops that move, select or describe data rather than compute on it: they keep whatever
/// precision their input has, as in a GPU engine, and are never wrapped.
const std::set<std::string>& data_movement_ops() {
  static const std::set<std::string> ops = {
      "Shape", "Size", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Split", "Slice",
      "Gather", "GatherElements", "GatherND", "ScatterElements", "ScatterND", "Expand", "Tile", "Identity", "Cast",
      "CastLike", "Constant", "ConstantOfShape", "Range", "NonZero", "Where", "Pad", "DepthToSpace", "SpaceToDepth",
      "If", "Loop", "Scan", "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "TopK", "ArgMax", "ArgMin",
      "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Not", "And", "Or", "Xor", "IsNaN", "IsInf",
      "OneHot", "EyeLike", "Trilu", "Compress", "Unique", "SequenceAt", "SequenceConstruct", "SequenceInsert",
      "SequenceEmpty", "SplitToSequence", "ConcatFromSequence", "Optional", "OptionalGetElement",
      "OptionalHasElement", "Dropout"};
  return ops;
}

}  // namespace

bool is_reducible_layer(const NodeSpec& spec, DType input0_dtype) {
  if (!spec.domain.empty() && spec.domain != "ai.parity") return false;
  if (data_movement_ops().count(spec.op_type)) return false;
  if (spec.inputs.empty() || spec.inputs[0].empty()) return false;
  return input0_dtype == DType::kFloat32;
}

bool has_int8_path(const NodeSpec& spec) {
  return spec.domain.empty() &&
         (spec.op_type == "Conv" || spec.op_type == "ConvTranspose" || spec.op_type == "MatMul" || spec.op_type == "Gemm");
}

std::vector<size_t> int8_operand_inputs(const NodeSpec& spec) {
  if (!has_int8_path(spec)) return {};
  return {0, 1};
}

int64_t int8_weight_axis(const NodeSpec& spec, size_t input, int64_t rank) {
  if (input != 1 || rank < 1) return -1;
  if (spec.op_type == "Conv") return 0;                // [O, I/G, k...]
  if (spec.op_type == "ConvTranspose") return 1;       // [I, O/G, k...] (per O/G within a group)
  if (spec.op_type == "MatMul") return rank - 1;       // [..., K, N]
  if (spec.op_type == "Gemm") {
    auto it = spec.attributes.find("transB");
    const bool trans_b = it != spec.attributes.end() && it->second.i != 0;
    return trans_b ? 0 : 1;                            // [N, K] or [K, N]
  }
  return -1;
}

DType choose_layer_precision(const NodeSpec& spec, DType input0_dtype, const ReducedPrecisionConfig& config,
                             std::vector<std::string>* warnings) {
  if (!config.enabled()) return DType::kFloat32;
  // An integer convolution or product is an int8 layer by construction (in int8 plans, where QDQ
  // convolutions and products become QLinearConv / QLinearMatMul: runtime/rewrites/qdq_fusion.h).
  if (spec.domain.empty() && (spec.op_type == "QLinearConv" || spec.op_type == "QLinearMatMul"))
    return config.int8 ? DType::kInt8 : DType::kFloat32;
  const bool reducible = is_reducible_layer(spec, input0_dtype);
  auto int8_ready = [&] {
    if (!reducible || !has_int8_path(spec)) return false;
    // Every activation operand needs a calibrated range (constant weights use their own).
    return config.int8_scales.count(spec.inputs[0]) > 0;
  };
  auto builder_choice = [&] {
    if (!reducible) return DType::kFloat32;
    if (config.int8 && int8_ready()) return DType::kInt8;
    if (config.fp16) return DType::kFloat16;
    if (config.bf16) return DType::kBFloat16;
    return DType::kFloat32;
  };
  auto requested = config.layer_precisions.find(spec.name);
  if (requested == config.layer_precisions.end() || config.constraints == PrecisionConstraints::kNone)
    return builder_choice();
  const DType want = requested->second;
  std::string why;
  if (want == DType::kFloat32) return DType::kFloat32;
  if (!reducible) why = "it is not a floating-point compute layer";
  else if (want == DType::kInt8 && !has_int8_path(spec)) why = "parity has no int8 path for " + spec.op_type;
  else if (want == DType::kInt8 && !int8_ready())
    why = "input '" + spec.inputs[0] + "' has no calibrated range (give --int8 with calibration data or a cache)";
  if (why.empty()) return want;
  if (config.constraints == PrecisionConstraints::kObey)
    fail(ErrorCode::kInvalidArgument, "--layer-precisions: layer '", spec.name, "' (", spec.op_type,
         ") cannot run in ", precision_name(want), ": ", why, " (--precision-constraints obey)");
  const DType fallback = builder_choice();
  if (warnings)
    warnings->push_back("layer '" + spec.name + "' (" + spec.op_type + ") cannot run in " + precision_name(want) +
                        ": " + why + "; it runs in " + precision_name(fallback));
  return fallback;
}

// --- operands ---

namespace {

/// A rounded (fp16/bf16) or per-channel fake-quantized (int8) copy of a constant operand.
Tensor reduce_constant(const Tensor& t, DType precision, const NodeSpec& spec, size_t input) {
  if (t.dtype() != DType::kFloat32) return t;
  Tensor out = t.clone();
  float* data = out.data<float>();
  if (precision != DType::kInt8) {
    round_floats_to(precision, data, out.numel());
    return out;
  }
  const QuantizedWeights q = quantize_weights_int8(t, int8_weight_axis(spec, input, t.rank()));
  const int8_t* values = q.values.data<int8_t>();
  const int64_t channels = static_cast<int64_t>(q.scales.size());
  const int64_t axis = int8_weight_axis(spec, input, t.rank());
  int64_t inner = 1;
  for (int64_t d = axis + 1; axis >= 0 && d < out.rank(); ++d) inner *= out.shape()[d];
  for (int64_t i = 0; i < out.numel(); ++i) data[i] = static_cast<float>(values[i]) * q.scales[(i / inner) % channels];
  return out;
}

/// Whether input `i` of a layer in `precision` is reduced at all: every float input of an
/// fp16/bf16 layer; the data operands of an int8 layer.
bool reduces_input(const NodeSpec& head, DType precision, size_t i) {
  if (precision != DType::kInt8) return true;
  const auto operands = int8_operand_inputs(head);
  return std::find(operands.begin(), operands.end(), i) != operands.end();
}

class ReducedPrecisionInit : public KernelInit,
                             public PackedStateSource,
                             public ReducedPrecisionSource,
                             public KernelPreferences {
 public:
  ReducedPrecisionInit(const KernelInit& base, DType precision)
      : KernelInit(base.spec(), base.precision()), base_(base), precision_(precision) {}

  std::optional<Tensor> constant_input(size_t i) const override {
    std::optional<Tensor> t = base_.constant_input(i);
    if (!t || !reduces_input(spec(), precision_, i)) return t;
    return reduce_constant(*t, precision_, spec(), i);
  }
  std::shared_ptr<Subgraph> subgraph(const std::string& attr_name) const override { return base_.subgraph(attr_name); }
  DType input_dtype(size_t i) const override { return base_.input_dtype(i); }
  bool winograd_allowed() const override { return runtime::winograd_allowed(base_); }
  const KernelOptions& kernel_options() const override { return runtime::kernel_options(base_); }
  std::optional<Shape> input_static_shape(size_t i) const override { return base_.input_static_shape(i); }
  DType compute_precision() const override { return precision_; }
  const PackedState* saved_packed_state() const override {
    const auto* source = dynamic_cast<const PackedStateSource*>(&base_);
    return source ? source->saved_packed_state() : nullptr;
  }

 private:
  const KernelInit& base_;
  DType precision_;
};

/// The node's context with some inputs replaced by their reduced copies.
class ReducedInputsContext : public KernelContext {
 public:
  ReducedInputsContext(KernelContext& base, const std::vector<const Value*>& replaced)
      : base_(base), replaced_(replaced) {}
  size_t num_inputs() const override { return base_.num_inputs(); }
  size_t num_outputs() const override { return base_.num_outputs(); }
  bool has_input(size_t i) const override { return base_.has_input(i); }
  const Value& input_value(size_t i) const override {
    if (i < replaced_.size() && replaced_[i]) return *replaced_[i];
    return base_.input_value(i);
  }
  bool has_output(size_t i) const override { return base_.has_output(i); }
  void set_output(size_t i, Value value) override { base_.set_output(i, std::move(value)); }
  Value& output_value(size_t i) override { return base_.output_value(i); }
  std::vector<Value> run_subgraph(const Subgraph& graph, std::vector<Value> inputs) override {
    return base_.run_subgraph(graph, std::move(inputs));
  }
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) override { base_.parallel_for(n, fn); }
  int num_threads() const override { return base_.num_threads(); }
  Precision precision() const override { return base_.precision(); }
  uint64_t next_random_seed() override { return base_.next_random_seed(); }
  std::string node_label() const override { return base_.node_label(); }
  std::string node_error_name() const override { return base_.node_error_name(); }

 private:
  KernelContext& base_;
  const std::vector<const Value*>& replaced_;
};

bool overlaps(const Tensor& a, const Tensor& b) {
  if (!a.raw_data() || !b.raw_data() || a.size_bytes() == 0 || b.size_bytes() == 0) return false;
  const auto* a0 = static_cast<const std::byte*>(a.raw_data());
  const auto* b0 = static_cast<const std::byte*>(b.raw_data());
  return a0 < b0 + b.size_bytes() && b0 < a0 + a.size_bytes();
}

}  // namespace

bool reduces_layer_input(const NodeSpec& head, DType precision, size_t input) {
  return precision != DType::kFloat32 && reduces_input(head, precision, input);
}

std::unique_ptr<KernelInit> make_reduced_precision_init(const KernelInit& base, DType precision) {
  return std::make_unique<ReducedPrecisionInit>(base, precision);
}

// --- the wrapper ---

class ReducedPrecisionKernel : public Kernel,
                               public PositionalFusableKernel,
                               public ChannelsLastKernel,
                               public PackedStateKernel,
                               public ReducedStorageKernel,
                               public Int8StorageKernel,
                               public QuantizedOutputKernel {
 public:
  ReducedPrecisionKernel(std::unique_ptr<Kernel> inner, NodeSpec head, DType precision, std::map<size_t, float> scales)
      : inner_(std::move(inner)), head_(std::move(head)), precision_(precision), scales_(std::move(scales)) {
    auto* native = dynamic_cast<NativeInt8Kernel*>(inner_.get());
    native_int8_ = precision_ == DType::kInt8 && native && native->take_int8_scales(scales_) && native->runs_int8();
  }

  /// Whether the inner kernel computes int8 natively (it quantizes the activations itself).
  bool native_int8() const { return native_int8_; }

  const std::map<size_t, float>& scales() const { return scales_; }
  DType precision() const { return precision_; }
  const NodeSpec& head() const { return head_; }

  /// Finalization: which inputs arrive already reduced, and the reduced constant inputs.
  void set_input_plan(std::vector<bool> already_reduced, std::map<size_t, Value> constants) {
    already_reduced_ = std::move(already_reduced);
    constants_ = std::move(constants);
  }

  void compute(KernelContext& ctx) const override {
    const size_t n = ctx.num_inputs();
    std::vector<Value> copies(n);
    std::vector<const Value*> replaced(n, nullptr);
    for (size_t i = 0; i < n; ++i) {
      if (auto c = constants_.find(i); c != constants_.end()) {
        replaced[i] = &c->second;
        continue;
      }
      if (!reduces_input(head_, precision_, i) || (i < already_reduced_.size() && already_reduced_[i])) continue;
      if (!ctx.has_input(i)) continue;
      const Value& v = ctx.input_value(i);
      if (!v.is_tensor() || v.tensor().dtype() != DType::kFloat32) continue;
      // The rounded copy comes from the buffer pool: a fresh multi-megabyte buffer per layer and
      // run cost more in page faults than the rounding itself.
      const Tensor& in = v.tensor();
      Tensor t = pooled_uninitialized_tensor(DType::kFloat32, in.shape());
      if (precision_ == DType::kInt8) {
        if (native_int8_) continue;  // the kernel quantizes its activations itself
        auto s = scales_.find(i);
        if (s == scales_.end()) continue;  // an int8 operand without a range (a constant handled above)
        fake_quantize_into(in.data<float>(), t.data<float>(), t.numel(), s->second);
      } else {
        round_floats_into(precision_, in.data<float>(), t.data<float>(), t.numel());
      }
      copies[i] = Value(std::move(t));
      replaced[i] = &copies[i];
    }
    ReducedInputsContext reduced(ctx, replaced);
    inner_->compute(reduced);
    if (precision_ == DType::kInt8) return;  // int8 layers hand out fp32 (dequantized) results
    for (size_t o = 0; o < ctx.num_outputs(); ++o) {
      if (!ctx.has_output(o)) continue;
      Value& out = ctx.output_value(o);
      if (!out.is_tensor() || out.tensor().dtype() != DType::kFloat32) continue;
      // A kernel may hand out an input's buffer (an identity case): round a copy, not the input.
      bool shared = false;
      for (size_t i = 0; i < n && !shared; ++i)
        shared = ctx.has_input(i) && ctx.input_value(i).is_tensor() && overlaps(out.tensor(), ctx.input_value(i).tensor());
      if (shared) {
        Tensor copy = pooled_uninitialized_tensor(DType::kFloat32, out.tensor().shape());
        round_floats_into(precision_, out.tensor().data<float>(), copy.data<float>(), copy.numel());
        out = Value(std::move(copy));
        continue;
      }
      Tensor& t = out.tensor();
      round_floats_to(precision_, t.data<float>(), t.numel());
    }
  }

  bool fuse_tail(const KernelInit& tail, size_t first_extra_input) override {
    auto* f = dynamic_cast<FusableKernel*>(inner_.get());
    return f && f->fuse_tail(tail, first_extra_input);
  }
  bool fuse_tail_at(const KernelInit& tail, size_t position, size_t first_extra_input) override {
    auto* f = dynamic_cast<PositionalFusableKernel*>(inner_.get());
    return f && f->fuse_tail_at(tail, position, first_extra_input);
  }
  bool can_write_channels_last() const override {
    auto* c = dynamic_cast<const ChannelsLastKernel*>(inner_.get());
    return c && c->can_write_channels_last();
  }
  void write_channels_last() override { dynamic_cast<ChannelsLastKernel&>(*inner_).write_channels_last(); }
  bool can_read_channels_last(size_t input) const override {
    auto* c = dynamic_cast<const ChannelsLastKernel*>(inner_.get());
    return c && c->can_read_channels_last(input);
  }
  void read_channels_last(size_t input) override { dynamic_cast<ChannelsLastKernel&>(*inner_).read_channels_last(input); }
  bool passes_layout_through() const override {
    auto* c = dynamic_cast<const ChannelsLastKernel*>(inner_.get());
    return c && c->passes_layout_through();
  }
  bool converts_to_channels_last() const override {
    auto* c = dynamic_cast<const ChannelsLastKernel*>(inner_.get());
    return c && c->converts_to_channels_last();
  }
  bool prefers_channels_last(size_t input) const override {
    auto* c = dynamic_cast<const ChannelsLastKernel*>(inner_.get());
    return c && c->prefers_channels_last(input);
  }
  std::optional<PackedState> packed_state() const override {
    auto* p = dynamic_cast<const PackedStateKernel*>(inner_.get());
    return p ? p->packed_state() : std::nullopt;
  }
  bool reads_reduced_input(size_t input) const override {
    auto* r = dynamic_cast<const ReducedStorageKernel*>(inner_.get());
    return precision_ == DType::kBFloat16 && r && r->reads_reduced_input(input);
  }
  bool can_write_reduced() const override {
    auto* r = dynamic_cast<const ReducedStorageKernel*>(inner_.get());
    return precision_ == DType::kBFloat16 && r && r->can_write_reduced();
  }
  void write_reduced() override { dynamic_cast<ReducedStorageKernel&>(*inner_).write_reduced(); }
  // int8 storage: only a layer that runs int8 natively (a fake-quantizing one reads fp32).
  bool reads_int8_input(size_t input) const override {
    auto* k = dynamic_cast<const Int8StorageKernel*>(inner_.get());
    return native_int8_ && k && scales_.count(input) && k->reads_int8_input(input);
  }
  bool can_write_int8() const override {
    auto* k = dynamic_cast<const Int8StorageKernel*>(inner_.get());
    return native_int8_ && k && k->can_write_int8();
  }
  void write_int8(float scale) override { dynamic_cast<Int8StorageKernel&>(*inner_).write_int8(scale); }
  DType int8_output_dtype() const override {
    auto* k = dynamic_cast<const Int8StorageKernel*>(inner_.get());
    return k ? k->int8_output_dtype() : DType::kUndefined;
  }
  DType int8_source_dtype() const override {
    auto* k = dynamic_cast<const Int8StorageKernel*>(inner_.get());
    return native_int8_ && k ? k->int8_source_dtype() : DType::kUndefined;
  }
  bool output_non_negative() const override {
    auto* k = dynamic_cast<const Int8StorageKernel*>(inner_.get());
    return k && k->output_non_negative();
  }
  bool take_non_negative_source(float scale) override {
    auto* k = dynamic_cast<Int8StorageKernel*>(inner_.get());
    if (precision_ != DType::kInt8 || !k || scales_.count(0) == 0 || scale != scales_.at(0)) return native_int8_;
    auto* native = dynamic_cast<NativeInt8Kernel*>(inner_.get());
    native_int8_ = k->take_non_negative_source(scale) && native && native->runs_int8();
    return native_int8_;
  }
  bool can_write_quantized() const override {
    auto* k = dynamic_cast<const QuantizedOutputKernel*>(inner_.get());
    return precision_ == DType::kInt8 && k && k->can_write_quantized();
  }
  void write_quantized(float scale) override { dynamic_cast<QuantizedOutputKernel&>(*inner_).write_quantized(scale); }
  float quantized_output_scale() const override {
    auto* k = dynamic_cast<const QuantizedOutputKernel*>(inner_.get());
    return k ? k->quantized_output_scale() : 0.0f;
  }
  /// Whether this layer quantizes input `input` itself (fp32 on quantized values), with
  /// input_scale(input).
  bool fake_quantizes_input(size_t input) const {
    return precision_ == DType::kInt8 && !native_int8_ && scales_.count(input) && reduces_input(head_, precision_, input) &&
           !constants_.count(input) && !(input < already_reduced_.size() && already_reduced_[input]);
  }
  /// Input `input` arrives quantized with input_scale(input) (write_quantized): no pass of its own.
  void take_quantized_input(size_t input) {
    if (already_reduced_.size() <= input) already_reduced_.resize(input + 1, false);
    already_reduced_[input] = true;
  }
  /// The inner kernel's Int8EngineKernel::int8_engine ("" when it does not run int8 natively).
  std::string int8_engine() const {
    const auto* engine = dynamic_cast<const Int8EngineKernel*>(inner_.get());
    return native_int8_ && engine ? engine->int8_engine() : std::string();
  }
  /// The activation scale input `input` is quantized with (0 when it has none).
  float input_scale(size_t input) const {
    auto it = scales_.find(input);
    return it == scales_.end() ? 0.0f : it->second;
  }

 private:
  std::unique_ptr<Kernel> inner_;
  NodeSpec head_;
  DType precision_;
  std::map<size_t, float> scales_;
  bool native_int8_ = false;
  std::vector<bool> already_reduced_;
  std::map<size_t, Value> constants_;
};

std::unique_ptr<Kernel> wrap_reduced_precision(std::unique_ptr<Kernel> inner, const NodeSpec& spec, DType precision,
                                               std::map<size_t, float> int8_scales) {
  if (precision == DType::kFloat32) return inner;
  return std::make_unique<ReducedPrecisionKernel>(std::move(inner), spec, precision, std::move(int8_scales));
}

const std::map<size_t, float>* int8_scales_of(const Kernel& kernel) {
  const auto* wrapped = dynamic_cast<const ReducedPrecisionKernel*>(&kernel);
  return wrapped ? &wrapped->scales() : nullptr;
}

bool runs_native_int8(const Kernel& kernel) {
  const auto* wrapped = dynamic_cast<const ReducedPrecisionKernel*>(&kernel);
  return wrapped && wrapped->native_int8();
}

bool native_bf16_available() {
#if PARITY_HAVE_DNNL
  return dnnl_support::native_bf16();
#else
  return false;
#endif
}

std::string int8_dataflow(const Kernel& kernel) {
  const auto* wrapped = dynamic_cast<const ReducedPrecisionKernel*>(&kernel);
  if (!wrapped || !wrapped->native_int8()) return "";
  const DType source = wrapped->int8_source_dtype(), output = wrapped->int8_output_dtype();
  auto name = [](DType t) { return t == DType::kUInt8 ? std::string("u8") : std::string("s8"); };
  // Kernels without Int8StorageKernel (the matmuls) quantize to s8 and write fp32.
  return (source == DType::kUndefined ? "s8" : name(source)) + " x s8 -> s32 -> " +
         (output == DType::kUndefined ? "fp32" : name(output));
}

std::string int8_engine(const Kernel& kernel) {
  const auto* wrapped = dynamic_cast<const ReducedPrecisionKernel*>(&kernel);
  return wrapped ? wrapped->int8_engine() : std::string();
}

bool native_int8_available() {
#if PARITY_HAVE_DNNL
  return dnnl_support::int8_sums_exactly();
#else
  return false;
#endif
}

void finalize_reduced_precision(Subgraph& g) {
  // What each slot holds: values already rounded to fp16/bf16 (by a layer of that type, or moved
  // unchanged by a data-movement op from such values).
  std::vector<DType> rounded_as(g.slot_names_.size(), DType::kUndefined);
  std::set<int> graph_inputs(g.input_slots_.begin(), g.input_slots_.end());
  auto constant_of = [&](int slot) -> const Value* {
    if (slot < 0 || graph_inputs.count(slot)) return nullptr;
    for (const auto& [s, v] : g.constants_)
      if (s == slot) return &v;
    auto it = g.plan_time_values_.find(slot);
    return it == g.plan_time_values_.end() ? nullptr : &it->second;
  };
  for (auto& node : g.nodes_) {
    auto* wrapped = dynamic_cast<ReducedPrecisionKernel*>(node.kernel.get());
    if (!wrapped) {
      // A data-movement op of rounded values hands out rounded values.
      if (!data_movement_ops().count(node.spec.op_type) || node.inputs.empty() || node.inputs[0] < 0) continue;
      const DType r = rounded_as[node.inputs[0]];
      if (r == DType::kUndefined) continue;
      for (int s : node.outputs)
        if (s >= 0) rounded_as[s] = r;
      continue;
    }
    const DType p = wrapped->precision();
    std::vector<bool> already(node.inputs.size(), false);
    std::map<size_t, Value> constants;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const int s = node.inputs[i];
      if (s < 0) continue;
      if (p != DType::kInt8 && rounded_as[s] == p) already[i] = true;
      if (!reduces_input(wrapped->head(), p, i)) continue;
      if (const Value* c = constant_of(s); c && c->is_tensor() && c->tensor().dtype() == DType::kFloat32)
        constants[i] = Value(reduce_constant(c->tensor(), p, wrapped->head(), i));
    }
    wrapped->set_input_plan(std::move(already), std::move(constants));
    if (p != DType::kInt8)
      for (int s : node.outputs)
        if (s >= 0) rounded_as[s] = p;
  }
}

namespace {

/// Tells every int8 layer whose input 0 comes from a layer with a non-negative output so
/// (Int8StorageKernel::take_non_negative_source).
void take_non_negative_int8_sources(Subgraph& g) {
  std::vector<const PlannedNode*> producer(g.slot_names_.size(), nullptr);
  for (const auto& node : g.nodes_)
    for (int s : node.outputs)
      if (s >= 0) producer[s] = &node;
  // Whether every value of `slot` is >= 0: a layer's non-negative tails, a Relu, or pooling and
  // data movement of such values (a few levels up).
  std::function<bool(int, int)> non_negative = [&](int slot, int depth) {
    const PlannedNode* from = slot >= 0 ? producer[slot] : nullptr;
    if (!from || from->folded || depth > 8 || from->outputs.empty() || from->outputs[0] != slot) return false;
    if (const auto* k = dynamic_cast<const Int8StorageKernel*>(from->kernel.get())) return k->output_non_negative();
    if (!from->tails.empty() || !from->spec.domain.empty()) return false;
    static const std::set<std::string> keep_sign = {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
                                                    "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze",
                                                    "Identity"};
    const std::string& op = from->spec.op_type;
    if (op == "Relu") return true;
    return keep_sign.count(op) && !from->inputs.empty() && non_negative(from->inputs[0], depth + 1);
  };
  for (auto& node : g.nodes_) {
    auto* reader = dynamic_cast<ReducedPrecisionKernel*>(node.kernel.get());
    if (node.folded || !reader || reader->precision() != DType::kInt8 || node.inputs.empty() || node.inputs[0] < 0)
      continue;
    if (non_negative(node.inputs[0], 0)) reader->take_non_negative_source(reader->input_scale(0));
  }
}

using SlotReaders = std::vector<std::vector<std::pair<const PlannedNode*, size_t>>>;

/// Whether `node`'s first output may be stored in a reduced type: no graph output, nothing kept alive
/// for observers, and read by at least one node (its readers then decide).
bool output_may_be_reduced(const Subgraph& g, const PlannedNode& node, const std::set<int>& graph_outputs,
                           const SlotReaders& readers) {
  const int slot = node.outputs[0];
  return slot >= 0 && !graph_outputs.count(slot) &&
         !(slot < static_cast<int>(g.keep_alive_.size()) && g.keep_alive_[slot]) && !readers[slot].empty();
}

/// The int8 half of store_reduced_between_native_layers; `readers`: per slot, the nodes and input
/// indices reading it.
int store_int8_between_native_layers(Subgraph& g, const std::set<int>& graph_outputs, const SlotReaders& readers) {
  int stored = 0;
  for (auto& node : g.nodes_) {
    auto* writer = dynamic_cast<ReducedPrecisionKernel*>(node.kernel.get());
    if (node.folded || !writer || !writer->can_write_int8() || node.outputs.empty()) continue;
    if (!output_may_be_reduced(g, node, graph_outputs, readers)) continue;
    const int slot = node.outputs[0];
    // Every reader quantizes the value with its calibrated scale (one per tensor name, so they agree).
    std::optional<float> scale;
    bool int8_readers = true;
    for (const auto& [reader, input] : readers[slot]) {
      const auto* r = dynamic_cast<const ReducedPrecisionKernel*>(reader->kernel.get());
      if (!r || !r->reads_int8_input(input) || (scale && *scale != r->input_scale(input))) {
        int8_readers = false;
        break;
      }
      scale = r->input_scale(input);
    }
    if (!int8_readers || !scale || !(*scale > 0) || !std::isfinite(*scale)) continue;
    writer->write_int8(*scale);
    ++stored;
  }
  return stored;
}

/// The quantized fp32 hand-off (QuantizedOutputKernel): writers whose readers all quantize their
/// output themselves, with one scale.
int quantize_into_fake_quantizing_layers(Subgraph& g, const std::set<int>& graph_outputs, const SlotReaders& readers) {
  int handed = 0;
  for (auto& node : g.nodes_) {
    auto* writer = dynamic_cast<ReducedPrecisionKernel*>(node.kernel.get());
    if (node.folded || !writer || !writer->can_write_quantized() || node.outputs.empty()) continue;
    if (writer->int8_output_dtype() != DType::kUndefined || !output_may_be_reduced(g, node, graph_outputs, readers)) continue;
    const int slot = node.outputs[0];
    std::optional<float> scale;
    bool quantizing_readers = true;
    for (const auto& [reader, input] : readers[slot]) {
      const auto* r = dynamic_cast<const ReducedPrecisionKernel*>(reader->kernel.get());
      if (reader->folded || !r || !r->fake_quantizes_input(input) || (scale && *scale != r->input_scale(input))) {
        quantizing_readers = false;
        break;
      }
      scale = r->input_scale(input);
    }
    if (!quantizing_readers || !scale || !(*scale > 0) || !std::isfinite(*scale)) continue;
    writer->write_quantized(*scale);
    for (const auto& [reader, input] : readers[slot])
      dynamic_cast<ReducedPrecisionKernel&>(*reader->kernel).take_quantized_input(input);
    ++handed;
  }
  return handed;
}

}  // namespace

int store_reduced_between_native_layers(Subgraph& g) {
  SlotReaders readers(g.slot_names_.size());
  for (const auto& node : g.nodes_)
    for (size_t i = 0; i < node.inputs.size(); ++i)
      if (node.inputs[i] >= 0) readers[node.inputs[i]].emplace_back(&node, i);
  const std::set<int> graph_outputs(g.output_slots_.begin(), g.output_slots_.end());
  int stored = 0;
  for (auto& node : g.nodes_) {
    auto* writer = dynamic_cast<ReducedPrecisionKernel*>(node.kernel.get());
    if (node.folded || !writer || !writer->can_write_reduced() || node.outputs.empty()) continue;
    if (!output_may_be_reduced(g, node, graph_outputs, readers)) continue;
    const int slot = node.outputs[0];
    bool native_readers = true;
    for (const auto& [reader, input] : readers[slot]) {
      const auto* r = dynamic_cast<const ReducedStorageKernel*>(reader->kernel.get());
      native_readers = native_readers && r && r->reads_reduced_input(input);
    }
    if (!native_readers) continue;
    writer->write_reduced();
    ++stored;
  }
  take_non_negative_int8_sources(g);
  stored += store_int8_between_native_layers(g, graph_outputs, readers);
  // Not counted: the values stay fp32.
  quantize_into_fake_quantizing_layers(g, graph_outputs, readers);
  return stored;
}

}  // namespace parity::runtime
